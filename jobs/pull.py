import sys

from cdcflow import job_entry

sys.exit(job_entry.main("pull"))
