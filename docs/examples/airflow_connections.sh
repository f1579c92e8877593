# The downstream's login and password as an Airflow connection, in the environment (Airflow's
# JSON form; its URI form works too).  The changefeed's sink URI names the connection, not the
# password:  --sink-uri 'mysql://replica.internal:3306/?airflow-conn-id=shop_replica'
export AIRFLOW_CONN_SHOP_REPLICA='{"conn_type": "mysql", "host": "replica.internal", "port": 3306, "login": "writer", "password": "s3cret"}'

# The upstream's password in a variable of its own:
#   --source-uri 'mysql://repl@db1.internal:3306/?password-env=SHOP_SOURCE_PW'
export SHOP_SOURCE_PW='r3pl'

# In Airflow, the same connection made once in its database (or a secrets backend) serves the DAG's tasks:
#   airflow connections add shop_replica --conn-type mysql --conn-host replica.internal \
#       --conn-port 3306 --conn-login writer --conn-password s3cret
