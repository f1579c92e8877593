"""cdcflow: TiCDC changefeed semantics as Airflow-orchestrated Spark jobs."""

from cdcflow.core import environment as _environment

__version__ = "0.1.0"

# before any module of cdcflow's loads pyarrow, whose allocator reads its options as it loads
_environment.set_for_libraries()
