"""What a developer runs on a laptop: the local Kafka broker and the demo. May import
everything below the CLI.
"""
