"""The bottom layer: pure definitions everything else shares, no I/O.

The topic and table catalogue, the event schema, the settings and the pure builders that
turn settings into Kafka client and Spark options. Imports nothing of this project.
"""
