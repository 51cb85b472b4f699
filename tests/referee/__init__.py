"""The referee service through real gRPC servers and processes."""
