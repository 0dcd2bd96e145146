"""What tests share besides fixtures: settings and ports, events and Kafka records, running a
pipeline of a test's own, the secret-leak search. Fixtures stay in conftest files; a test
module imports from here and from tests/standins/, never from another test module or a conftest."""
