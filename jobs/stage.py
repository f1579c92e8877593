import sys

from cdcflow.launch import spark_submit

sys.exit(spark_submit.main())
