"""The launchers of a cycle: one cycle runner (cycle_runner.py) under one module per launcher —
`cdcflow changefeed run` (in_process.py), the spark-submit job (spark_submit.py) and the
DAG's tasks (dag_tasks.py, without Airflow: the plugin maps their values to Airflow's).
The Spark session of a changefeed's stages is sessions.py's."""
