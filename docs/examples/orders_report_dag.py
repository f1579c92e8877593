"""A DAG of one's own, run whenever a changefeed has changed the downstream table shop.orders:
scheduled on the table's Asset, which the changefeed's finish task announces through its
AssetAlias (docs/guides/airflow.md, "Downstream tables as Assets")."""

from airflow.sdk import DAG, Asset, task

# the sink URI's host and port, the port always written: mysql://host:port/database/table
ORDERS = Asset("mysql://tidb.internal:4000/shop/orders")

with DAG("orders_report", schedule=[ORDERS]) as dag:

    @task
    def report(*, triggering_asset_events=None):
        for event in (triggering_asset_events or {}).get(ORDERS, []):
            # every upstream change committed at or below checkpoint_ts is in the table
            print(event.extra["changefeed"], event.extra["checkpoint_ts"], event.extra["checkpoint_time"])

    report()
