"""Speed and memory: how fast and how lean each path is (tables, never timing asserts in tests)."""
