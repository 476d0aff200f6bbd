"""The fencegate benchmark harness: servers, load, measurements and the report."""
