"""One subpackage per architecture: configuration_<name>.py + modeling_<name>.py."""
