"""The suite, by area (see the README's Layout): each folder is a package, so test files may share a basename."""
