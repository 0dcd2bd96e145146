"""One ComponentResource per concern; each takes one args object and exposes named outputs."""
