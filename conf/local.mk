# conf/ - example configuration and service files
