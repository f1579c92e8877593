"""cdcflow: TiCDC changefeed semantics as Airflow-orchestrated Spark jobs."""

__version__ = "0.1.0"
