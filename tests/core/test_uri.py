import dataclasses
import pickle
import socket

import pymysql
import pytest

from cdcflow.core.errors import CdcflowError, ConfigError
from cdcflow.core.sink_params import SinkOptions, merge_sink_options
from cdcflow.core.uri import (
    DbUri,
    Params,
    default_server_id,
    parse_sink_uri,
    parse_source_uri,
    validate_changefeed_id,
)

SECRET = "s3cr#t/p@ss?w:rd%"


def encoded(pw: str) -> str:
    from urllib.parse import quote
    return quote(pw, safe="")


def config_error(fn, text) -> str:
    with pytest.raises(ConfigError) as e:
        fn(text)
    assert e.value.code == "CDCFLOW:ErrInvalidConfig"
    return str(e.value)


# --- parsing ----------------------------------------------------------------

def test_source_uri():
    u = parse_source_uri("mysql://repl:pw@db1.example.com:3307/?server-id=4242")
    assert (u.scheme, u.host, u.port, u.user, u.password) == ("mysql", "db1.example.com", 3307, "repl", "pw")
    assert u.params == {"server-id": "4242"} and u.server_id == 4242
    assert not u.is_tidb


@pytest.mark.parametrize("text,scheme,port", [
    ("mysql://root@127.0.0.1", "mysql", 3306),
    ("mysql://root@127.0.0.1/", "mysql", 3306),
    ("MYSQL://root@127.0.0.1:", "mysql", 3306),
    ("tidb://root@127.0.0.1/", "tidb", 4000),
    ("tidb://root@127.0.0.1:4001/", "tidb", 4001),
])
def test_default_ports_and_scheme_case(text, scheme, port):
    u = parse_sink_uri(text)
    assert (u.scheme, u.port, u.is_tidb) == (scheme, port, scheme == "tidb")


def test_sink_uri_with_every_parameter():
    u = parse_sink_uri("tidb://u:p@10.0.0.5:4000/?worker-count=8&max-txn-row=512&safe-mode=true"
                       "&transaction-atomicity=table&time-zone=Asia%2FShanghai")
    assert u.is_tidb
    assert dict(u.params) == {"worker-count": "8", "max-txn-row": "512", "safe-mode": "true",
                              "transaction-atomicity": "table", "time-zone": "Asia/Shanghai"}
    assert merge_sink_options(SinkOptions(), u.params) == SinkOptions(
        safe_mode=True, worker_count=8, max_txn_row=512, transaction_atomicity="table")


def test_user_defaults_to_root_and_password_to_empty():
    u = parse_sink_uri("mysql://db:3306/")
    assert u.user == "root" and u.password == "" and u.server_id is None


def test_ipv6_host():
    u = parse_sink_uri("mysql://root:pw@[::1]:3310/")
    assert u.host == "::1" and u.port == 3310
    assert u.redacted() == "mysql://root:***@[::1]:3310/"


@pytest.mark.parametrize("password", ["p@ss", "a/b?c#d", "100%sure", "sp ace+plus", "ünï", "x:y", SECRET])
def test_percent_encoded_passwords(password):
    u = parse_source_uri(f"mysql://root:{encoded(password)}@h:3306/")
    assert u.password == password


def test_plus_in_password_is_a_plus():
    # user info is not form-encoded: '+' stays '+', unlike in the query string
    assert parse_source_uri("mysql://root:a+b@h/").password == "a+b"
    assert parse_sink_uri("mysql://h/?time-zone=%2B08:00").params["time-zone"] == "+08:00"


def test_unencoded_at_sign_in_password_still_parses():
    # the last '@' separates user info from host, as in every URL parser
    assert parse_source_uri("mysql://root:p@ss@h:3306/").password == "p@ss"


@pytest.mark.parametrize("text", [
    "mysql://root:ab?cd@h:3306/",
    "mysql://root:ab#cd@h:3306/",
    "mysql://root:ab/cd@h:3306/",
])
def test_unencoded_delimiters_in_password_are_refused_without_echo(text):
    message = config_error(parse_source_uri, text)
    assert "percent-encode" in message
    assert "cd" not in message.replace("encode", "")  # nothing after the delimiter is echoed


# --- redaction --------------------------------------------------------------

def test_redacted_hides_password_everywhere():
    u = parse_sink_uri(f"mysql://app:{encoded(SECRET)}@h:3306/?worker-count=2&time-zone=%2B08%3A00")
    assert u.password == SECRET
    assert u.redacted() == "mysql://app:***@h:3306/?time-zone=%2B08:00&worker-count=2"
    for shown in (u.redacted(), str(u), repr(u), f"{u}", str(dataclasses.asdict(u)["params"])):
        assert SECRET not in shown and encoded(SECRET) not in shown
    assert "password" not in repr(u)


def test_redacted_round_trips():
    u = parse_sink_uri("tidb://us%40er:pw@h:4000/?safe-mode=true&worker-count=3&time-zone=%2B08:00")
    again = parse_sink_uri(u.redacted())
    assert (again.user, again.host, again.port, again.params) == (u.user, u.host, u.port, u.params)
    assert parse_sink_uri("mysql://root@h/").redacted() == "mysql://root@h:3306/"


def test_errors_never_show_the_password():
    bad = [
        f"mysql://root:{encoded(SECRET)}@h:3306/?worker-count=0",
        f"mysql://root:{encoded(SECRET)}@h:3306/?nope=1",
        f"mysql://root:{encoded(SECRET)}@h:99999/",
        f"mysql://root:{encoded(SECRET)}@:3306/",
        f"postgres://root:{encoded(SECRET)}@h:3306/",
        f"mysql://root:{encoded(SECRET)}@h:3306/db",
        f"root:{encoded(SECRET)}@h:3306",
    ]
    for text in bad:
        message = config_error(parse_sink_uri, text)
        assert SECRET not in message and encoded(SECRET) not in message, message


# --- bad URIs ---------------------------------------------------------------

@pytest.mark.parametrize("fn,text,parts", [
    (parse_sink_uri, "", ["sink URI is empty"]),
    (parse_sink_uri, "kafka://broker:9092/", ["'kafka'", "mysql:// or tidb://"]),
    (parse_sink_uri, "mysql+ssl://h/", ["'mysql+ssl'"]),
    (parse_sink_uri, "localhost:3306", ["scheme is missing"]),
    (parse_source_uri, "tidb://root@h:4000/", ["'tidb'", "no binlog", "mysql://"]),
    (parse_source_uri, "mysql://root:pw@/", ["no host"]),
    (parse_source_uri, "mysql://:3306/", ["no host"]),
    (parse_source_uri, "mysql://h:0/", ["port '0'"]),
    (parse_source_uri, "mysql://h:70000/", ["port '70000'"]),
    (parse_source_uri, "mysql://h:db/", ["port 'db'"]),
    (parse_source_uri, "mysql://h:3306/test", ["path '/test'", "[filter] rules"]),
    (parse_source_uri, "mysql://h:3306/#x", ["#fragment"]),
])
def test_bad_uris(fn, text, parts):
    message = config_error(fn, text)
    for part in parts:
        assert part in message, message


@pytest.mark.parametrize("query,parts", [
    ("server-id=0", ["server-id='0'", "1 to 4294967295"]),
    ("server-id=4294967296", ["server-id='4294967296'"]),
    ("server-id=-1", ["server-id='-1'"]),
    ("server-id=abc", ["server-id='abc'"]),
    ("server-id=", ["server-id=''"]),
    ("server_id=5", ["unknown source URI parameter 'server_id'", "did you mean 'server-id'"]),
    ("worker-count=4", ["unknown source URI parameter 'worker-count'", "is a sink URI parameter"]),
    ("server-id", ["'server-id' has no value"]),
    ("server-id=1&server-id=2", ["given twice"]),
    ("ssl-ca=/x", ["unknown source URI parameter 'ssl-ca'", "server-id"]),
])
def test_bad_source_parameters(query, parts):
    message = config_error(parse_source_uri, f"mysql://root@h:3306/?{query}")
    for part in parts:
        assert part in message, message


def test_timeouts_default_to_ticdcs_and_follow_the_uri():
    assert parse_sink_uri("mysql://h/").connection_args()["read_timeout"] == 120  # TiCDC's 2m
    args = parse_source_uri("mysql://h/?read-timeout=1.5s&write-timeout=500ms&timeout=1m").connection_args()
    assert (args["read_timeout"], args["write_timeout"], args["connect_timeout"]) == (1.5, 0.5, 60)
    options = merge_sink_options(SinkOptions(), {"read-timeout": "7s", "ddl-timeout": "2h"})
    assert parse_sink_uri("mysql://h/").connection_args(options)["read_timeout"] == 7
    assert options.ddl_read_timeout() == 7200
    message = config_error(parse_source_uri, "mysql://h/?read-timeout=10")
    assert "source URI parameter read-timeout='10'" in message, message


def test_a_password_reference_is_resolved_at_connection_time(monkeypatch):
    from cdcflow.core.errors import CdcflowError

    uri = parse_sink_uri("mysql://u@h/?password-env=CDCFLOW_UNIT_PW")
    assert uri.password == "" and "CDCFLOW_UNIT_PW" in uri.redacted()
    monkeypatch.delenv("CDCFLOW_UNIT_PW", raising=False)
    with pytest.raises(CdcflowError) as e:
        uri.connection_args()
    assert e.value.code == "CDCFLOW:ErrCredentialUnresolved" and e.value.retryable
    assert "sink URI" in str(e.value) and "CDCFLOW_UNIT_PW" in str(e.value)
    monkeypatch.setenv("CDCFLOW_UNIT_PW", SECRET)
    assert uri.connection_args()["password"] == SECRET
    message = config_error(parse_sink_uri, f"mysql://u:{encoded(SECRET)}@h/?password-env=X")
    assert "holds a password and password-env=X" in message and SECRET not in message


@pytest.mark.parametrize("value", [
    f"mysql://airuser:{encoded(SECRET)}@db:3306/schema",
    '{"conn_type": "mysql", "login": "airuser", "password": "%s", "host": "db"}' % SECRET.replace("\\", "\\\\"),
])
def test_an_airflow_connection_from_its_environment_variable(monkeypatch, value):
    monkeypatch.setenv("AIRFLOW_CONN_MY_DB", value)
    args = parse_source_uri("mysql://h/?airflow-conn-id=my_db").connection_args()
    assert (args["user"], args["password"]) == ("airuser", SECRET)


def test_the_homes_airflow_lookup_is_asked_first(monkeypatch):
    from cdcflow.core.home import Home

    with Home(airflow_lookup=lambda changefeed_id: (None, f"pw-of-{changefeed_id}")).entered():
        args = parse_sink_uri("mysql://someone@h/?airflow-conn-id=x").connection_args()
    assert (args["user"], args["password"]) == ("someone", "pw-of-x")
    with pytest.raises(CdcflowError, match="no environment variable AIRFLOW_CONN_X"):  # the block's lookup only
        parse_sink_uri("mysql://someone@h/?airflow-conn-id=x").connection_args()


def test_server_id_bounds():
    assert parse_source_uri("mysql://h/?server-id=1").server_id == 1
    assert parse_source_uri("mysql://h/?server-id=4294967295").server_id == 2**32 - 1


@pytest.mark.parametrize("query,parts", [
    ("worker-count=0", ["worker-count='0'", "an integer of at least 1"]),
    ("worker-count=x", ["worker-count='x'"]),
    ("max-txn-row=-1", ["max-txn-row='-1'"]),
    ("max-txn-row=1.5", ["max-txn-row='1.5'"]),
    ("safe-mode=yes", ["safe-mode='yes'", "true or false"]),
    ("transaction-atomicity=global", ["transaction-atomicity='global'", "none or table"]),
    ("server-id=3", ["unknown sink URI parameter 'server-id'", "is a source URI parameter"]),
    ("workercount=3", ["unknown sink URI parameter 'workercount'", "did you mean 'worker-count'"]),
    ("max-txn-row=1&max-txn-row=2", ["given twice"]),
    ("protocol=canal-json", ["unknown sink URI parameter 'protocol'", "worker-count"]),
    ("read-timeout=2", ["read-timeout='2'", "a duration above zero such as 2m"]),
    ("write-timeout=0s", ["write-timeout='0s'"]),
    ("timeout=-1m", ["timeout='-1m'"]),
    ("ddl-timeout=forever", ["ddl-timeout='forever'"]),
    ("password-env=A&airflow-conn-id=b", ["both password-env and airflow-conn-id"]),
    ("password-env=", ["password-env is empty"]),
])
def test_bad_sink_parameters(query, parts):
    message = config_error(parse_sink_uri, f"mysql://root@h:3306/?{query}")
    for part in parts:
        assert part in message, message


@pytest.mark.parametrize("tz", ["UTC", "Asia/Shanghai", "+08:00", "Mars/Olympus"])
def test_time_zone_is_accepted_and_has_no_effect(tz, caplog):
    # TiCDC URIs name it; rows are written in a UTC session whatever it says (see core.sink_params)
    from urllib.parse import quote
    u = parse_sink_uri(f"mysql://h/?time-zone={quote(tz, safe='')}")
    assert merge_sink_options(SinkOptions(), u.params) == SinkOptions()
    assert f"time-zone={tz} has no effect" in caplog.text and "UTC session" in caplog.text


# --- the value type ---------------------------------------------------------

def test_db_uri_is_frozen_hashable_and_picklable():
    u = parse_sink_uri("mysql://root:pw@h:3306/?worker-count=2")
    with pytest.raises(dataclasses.FrozenInstanceError):
        u.host = "x"
    with pytest.raises(TypeError):
        u.params["worker-count"] = "3"
    assert hash(u) == hash(parse_sink_uri("mysql://root:pw@h:3306/?worker-count=2"))
    assert pickle.loads(pickle.dumps(u)) == u
    assert {u: 1}[parse_sink_uri("mysql://root:pw@h/?worker-count=2")] == 1


def test_params_mapping():
    p = Params({"b": "2", "a": "1"})
    assert list(p) == ["a", "b"] and len(p) == 2 and p["a"] == "1" and p.get("c") is None
    assert p == {"a": "1", "b": "2"} and p == Params([("a", "1"), ("b", "2")]) and p != Params({"a": "1"})
    with pytest.raises(KeyError):
        p["c"]
    with pytest.raises(TypeError):
        Params({"a": 1})
    # a plain dict given to DbUri is stored as Params
    u = DbUri("mysql", "h", 3306, "root", "pw", {"worker-count": "2"})
    assert isinstance(u.params, Params) and hash(u)


def test_connect_refused_raises_pymysql_error_quickly():
    # connect() is thin: pymysql's error propagates, with no password in it
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    u = parse_sink_uri(f"mysql://root:{encoded(SECRET)}@127.0.0.1:{port}/")
    with pytest.raises(pymysql.err.OperationalError) as e:
        u.connect(connect_timeout=2)
    assert e.value.args[0] == 2003
    assert SECRET not in str(e.value)
    with pytest.raises(ValueError, match="LOAD DATA LOCAL"):
        u.connect(local_infile=True)


# --- changefeed ids and server ids ----------------------------------------------

@pytest.mark.parametrize("changefeed_id", ["a", "simple-changefeed-task", "A1-b2-C3", "0", "x" * 128, "orders-2024"])
def test_valid_changefeed_ids(changefeed_id):
    assert validate_changefeed_id(changefeed_id) == changefeed_id


@pytest.mark.parametrize("changefeed_id", ["", "-a", "a-", "a--b", "a_b", "a b", "a.b", "ä", "x" * 129, "a\n", "a-b_c",
                                 None, 5])
def test_invalid_changefeed_ids(changefeed_id):
    message = config_error(validate_changefeed_id, changefeed_id)
    assert "^[a-zA-Z0-9]+(\\-[a-zA-Z0-9]+)*$" in message and "128" in message


def test_default_server_id():
    a, b = default_server_id("orders"), default_server_id("orders-2")
    assert a == default_server_id("orders")  # deterministic across processes (crc32, not hash())
    assert a != b
    assert default_server_id("orders") == 846_127_662  # 1_000_000 + crc32(b"orders") % 10**9
    ids = {default_server_id(f"cf-{i}") for i in range(2000)}
    assert len(ids) == 2000
    assert all(1_000_000 <= i < 1_001_000_000 < 2**32 for i in ids)
