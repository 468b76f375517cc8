"""Spark jobs: each one a pure function from DataFrames to DataFrames.

They read the columns named in console.analytics.lake and never touch files or Kafka; the
launchers (console.analytics.launch) read the lake, call a job and write its result.
"""
