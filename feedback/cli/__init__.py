"""The `feedback` command: what a person runs. The top layer; it wires everything below."""
