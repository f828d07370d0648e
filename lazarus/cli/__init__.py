"""The `lazarus` command line."""
