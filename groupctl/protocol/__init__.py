"""The Kafka wire protocol: primitive types, message specs as data, errors, payloads."""
