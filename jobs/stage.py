import sys

from cdcflow.runner import spark_submit

sys.exit(spark_submit.main())
