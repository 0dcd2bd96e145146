"""The bottom layer: pure definitions everything else shares. Its only I/O is the settings
reading the environment and the config file (`load_settings`); a secret scope is read by the
reader the entry point passes in.

The topic and table catalogue, the event schema, the settings and the pure builders that
turn settings into Kafka client and Spark options. Imports nothing of this project.
"""
