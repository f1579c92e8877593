import sys

from cdcflow.stages import job_entry

sys.exit(job_entry.main())
