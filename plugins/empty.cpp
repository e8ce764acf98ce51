// Keeps the plugin host library non-empty before its sources exist.
