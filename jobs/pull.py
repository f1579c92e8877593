import sys

from cdcflow.spark import job_entry

sys.exit(job_entry.main("pull"))
