"""A broker: its listener, the partitions it leads, and their logs."""
