"""cdcflow: TiCDC changefeed semantics as Airflow-orchestrated Spark jobs."""

from cdcflow.core import environment as _environment
from cdcflow.core import heap as _heap

__version__ = "0.1.0"

# before any module of cdcflow's loads pyarrow, whose allocator reads its options as it loads
_environment.set_for_libraries()
# before the command's process loads its modules (core.heap.hold_off; its first stage settles)
if _heap.started_as_command():
    _heap.hold_off()
