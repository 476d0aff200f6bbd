"""api/openapi.yaml against itself and against the real binary.

Statically: the document is OpenAPI 3.1 as far as jsonschema can tell (every $ref resolves, every
operation has responses, every schema is a valid JSON Schema 2020-12 schema), and every problem
slug of the refusal table (gateway/http/refusal.cc) has its Problem.<slug> schema with its status.

Live: a real fencegate (filesystem backend in a temp dir, the lock API with signing and lock
rules, an http backend nobody listens on), and a second one with credentials (a route policy,
locks.policy, admin principals) for the 401 and 403 answers, are driven through EVERY documented
operation, refusals included, and each real answer is checked against the document: its status is one documented for
the operation, its content type is the documented one, its body validates against the schema. So
the description cannot drift from the binary. Needs Debian's python3-yaml and python3-jsonschema
(run by /usr/bin/python3)."""

import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import unittest

try:
    import jsonschema
    import yaml
except ImportError as e:
    sys.exit(f"{e}: run with /usr/bin/python3 and Debian's python3-yaml and python3-jsonschema "
             "(scripts/install-deps.sh)")

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "tests", "support"))
from free_port import free_port  # noqa: E402
from wait_until import wait_until  # noqa: E402

BINARY = os.environ.get("FENCEGATE_BINARY", os.path.join(SOURCE, "build", "gateway", "fencegate"))
SPEC_PATH = os.path.join(SOURCE, "api", "openapi.yaml")
REFUSAL_TABLE = os.path.join(SOURCE, "gateway", "http", "refusal.cc")
DEADLINE = 30
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
PROBLEM_PREFIX = "https://fencegate.dev/problems/"

with open(SPEC_PATH) as f:
    SPEC = yaml.safe_load(f)

Validator = jsonschema.Draft202012Validator


# The shape of an OpenAPI 3.1 document, the parts this one uses, as a JSON Schema (the official
# schema is not packaged in Debian): unknown fixed fields are refused so a typo cannot hide.
_REF = {"type": "object", "required": ["$ref"], "properties": {"$ref": {"type": "string"}}}
_EXT = {"^x-": {}}
_SCHEMA = {"type": ["object", "boolean"]}
_HEADER = {"type": "object", "additionalProperties": False, "patternProperties": _EXT,
           "properties": {"description": {"type": "string"}, "required": {"type": "boolean"},
                          "schema": _SCHEMA}}
_MEDIA = {"type": "object", "additionalProperties": False, "patternProperties": _EXT,
          "properties": {"schema": _SCHEMA, "example": {}, "examples": {"type": "object"}}}
_CONTENT = {"type": "object", "additionalProperties": _MEDIA,
            "propertyNames": {"pattern": r"^[a-z*]+/[a-z0-9.+*-]+(; ?[a-z]+=[^;]+)*$"}}
_PARAMETER = {"oneOf": [_REF, {
    "type": "object", "required": ["name", "in"], "additionalProperties": False,
    "patternProperties": _EXT,
    "properties": {"name": {"type": "string"},
                   "in": {"enum": ["path", "query", "header", "cookie"]},
                   "description": {"type": "string"}, "required": {"type": "boolean"},
                   "schema": _SCHEMA, "deprecated": {"type": "boolean"}}}]}
_RESPONSE = {"oneOf": [_REF, {
    "type": "object", "required": ["description"], "additionalProperties": False,
    "patternProperties": _EXT,
    "properties": {"description": {"type": "string"}, "content": _CONTENT,
                   "headers": {"type": "object",
                               "additionalProperties": {"oneOf": [_REF, _HEADER]}}}}]}
_OPERATION = {
    "type": "object", "required": ["responses", "operationId"], "additionalProperties": False,
    "patternProperties": _EXT,
    "properties": {
        "operationId": {"type": "string"}, "summary": {"type": "string"},
        "description": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
        "parameters": {"type": "array", "items": _PARAMETER},
        "requestBody": {"oneOf": [_REF, {
            "type": "object", "required": ["content"], "additionalProperties": False,
            "properties": {"description": {"type": "string"}, "required": {"type": "boolean"},
                           "content": _CONTENT}}]},
        "responses": {"type": "object", "minProperties": 1, "additionalProperties": False,
                      "patternProperties": {r"^([1-5](\d\d|XX)|default)$": _RESPONSE}},
        "security": {"type": "array"}, "servers": {"type": "array"}}}
_SERVER = {"type": "object", "required": ["url"], "additionalProperties": False,
           "properties": {"url": {"type": "string"}, "description": {"type": "string"}}}
OPENAPI_SHAPE = {
    "type": "object", "required": ["openapi", "info", "paths"], "additionalProperties": False,
    "patternProperties": _EXT,
    "properties": {
        "openapi": {"type": "string", "pattern": r"^3\.1\.\d+$"},
        "jsonSchemaDialect": {"type": "string"},
        "info": {"type": "object", "required": ["title", "version"]},
        "servers": {"type": "array", "items": _SERVER},
        "security": {"type": "array", "items": {"type": "object"}},
        "tags": {"type": "array", "items": {"type": "object", "required": ["name"]}},
        "paths": {"type": "object", "propertyNames": {"pattern": "^/"}, "additionalProperties": {
            "type": "object", "additionalProperties": False, "patternProperties": _EXT,
            "properties": dict({m: _OPERATION for m in METHODS}, **{
                "summary": {"type": "string"}, "description": {"type": "string"},
                "parameters": {"type": "array", "items": _PARAMETER},
                "servers": {"type": "array", "items": _SERVER}})}},
        "components": {
            "type": "object", "additionalProperties": False, "patternProperties": _EXT,
            "properties": {
                "schemas": {"type": "object", "additionalProperties": _SCHEMA},
                "responses": {"type": "object", "additionalProperties": _RESPONSE},
                "parameters": {"type": "object", "additionalProperties": _PARAMETER},
                "headers": {"type": "object", "additionalProperties": {"oneOf": [_REF, _HEADER]}},
                "securitySchemes": {"type": "object"}},
            "propertyNames": {"pattern": r"^[a-zA-Z0-9._-]+$"}}}}


def resolve_pointer(ref):
    """The object a local $ref ("#/a/b") names in the document; KeyError when it does not."""
    if not ref.startswith("#/"):
        raise KeyError(f"{ref}: only local references are used")
    node = SPEC
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def deref(node):
    while isinstance(node, dict) and "$ref" in node:
        node = resolve_pointer(node["$ref"])
    return node


def operations():
    """(operationId, path, method, operation) of every operation."""
    for path, item in SPEC["paths"].items():
        for method in METHODS:
            if method in item:
                yield item[method]["operationId"], path, method, item[method]


OPERATIONS = {op_id: (path, method, op) for op_id, path, method, op in operations()}


def walk(node, where="#"):
    """Every (location, dict) in the document."""
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from walk(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, f"{where}/{i}")


def schemas_in_document():
    """(location, schema) of every schema object: components.schemas, parameters, headers and
    media types (the places OpenAPI 3.1 puts JSON Schema)."""
    for name, schema in SPEC["components"]["schemas"].items():
        yield f"#/components/schemas/{name}", schema
    for where, node in walk(SPEC):
        if "/components/schemas/" in where:
            continue
        if "schema" in node and isinstance(node["schema"], (dict, bool)) and (
                "in" in node or "/content/" in where or "/headers/" in where):
            yield where + "/schema", node["schema"]


def refusal_table():
    """(status, slug) of every row of the gateway's refusal table."""
    with open(REFUSAL_TABLE) as f:
        text = f.read()
    return [(int(status), slug) for status, slug in
            re.findall(r'\{k\w+,\s*(\d{3}),\s*"([a-z0-9-]+)"', text)]


class DocumentTest(unittest.TestCase):
    def test_is_openapi_3_1(self):
        errors = list(Validator(OPENAPI_SHAPE).iter_errors(SPEC))
        self.assertEqual([], [f"{list(e.absolute_path)}: {e.message[:200]}" for e in errors[:5]])
        for section in SPEC["components"].values():
            for name in section:
                self.assertRegex(name, r"^[a-zA-Z0-9._-]+$")
        self.assertRegex(SPEC["openapi"], r"^3\.1\.\d+$")
        self.assertTrue(SPEC["info"]["title"])
        self.assertTrue(SPEC["info"]["version"])
        self.assertTrue(SPEC["paths"])
        for path in SPEC["paths"]:
            self.assertTrue(path.startswith("/"), path)

    def test_every_ref_resolves(self):
        count = 0
        for where, node in walk(SPEC):
            ref = node.get("$ref")
            if isinstance(ref, str):
                count += 1
                try:
                    resolve_pointer(ref)
                except (KeyError, IndexError, ValueError):
                    self.fail(f"{where}: $ref {ref} does not resolve")
        self.assertGreater(count, 100)

    def test_every_operation_has_responses(self):
        ids = [op_id for op_id, _, _, _ in operations()]
        self.assertEqual(len(ids), len(set(ids)), "operationIds are unique")
        for op_id, path, method, op in operations():
            with self.subTest(op_id):
                self.assertTrue(op.get("responses"), f"{method.upper()} {path}")
                for status, response in op["responses"].items():
                    self.assertRegex(str(status), r"^([1-5](\d\d|XX)|default)$")
                    self.assertIn("description", deref(response))
                shared = SPEC["paths"][path].get("parameters", [])
                for parameter in op.get("parameters", []) + shared:
                    parameter = deref(parameter)
                    self.assertIn(parameter["in"], ("path", "query", "header", "cookie"))
                    if parameter["in"] == "path":
                        self.assertTrue(parameter.get("required"), parameter["name"])
                        self.assertIn("{" + parameter["name"] + "}", path)

    def test_every_schema_is_a_2020_12_schema(self):
        count = 0
        for where, schema in schemas_in_document():
            count += 1
            try:
                Validator.check_schema(schema)
            except jsonschema.SchemaError as e:
                self.fail(f"{where}: {e.message}")
        self.assertGreater(count, 100)

    def test_every_refusal_of_the_table_is_described(self):
        schemas = SPEC["components"]["schemas"]
        table = refusal_table()
        self.assertGreater(len(table), 40)
        for status, slug in table:
            with self.subTest(slug):
                schema = schemas.get("Problem." + slug)
                self.assertIsNotNone(schema, f"no Problem.{slug} in {SPEC_PATH}")
                self.assertEqual(schema["properties"]["type"]["const"], PROBLEM_PREFIX + slug)
                self.assertEqual(schema["properties"]["status"]["const"], status)

    def test_every_problem_of_the_docs_is_described(self):
        """docs/ERRORS.md's tables (adapters' problems included) name no problem the document
        lacks, with the same status."""
        with open(os.path.join(SOURCE, "docs", "ERRORS.md")) as f:
            rows = re.findall(r"^\| (\d{3}) \| `([a-z0-9-]+)` \|", f.read(), re.MULTILINE)
        self.assertGreater(len(rows), 60)
        schemas = SPEC["components"]["schemas"]
        for status, slug in rows:
            with self.subTest(slug):
                self.assertIn("Problem." + slug, schemas)
                self.assertEqual(schemas["Problem." + slug]["properties"]["status"],
                                 {"const": int(status)})

    def test_every_admin_path_of_the_docs_is_described(self):
        """The admin and lock paths docs/ADMIN_API.md and docs/LOCKS_AND_TOKENS.md name."""
        text = ""
        for name in ("ADMIN_API.md", "LOCKS_AND_TOKENS.md", "OPERATIONS.md"):
            with open(os.path.join(SOURCE, "docs", name)) as f:
                text += f.read()
        documented = {re.sub(r"\{[a-z]+\}", "{}", path) for path in SPEC["paths"]}
        for path in set(re.findall(r"`(?:GET |POST )?(/admin/[a-z{}/-]*[a-z}]|/metrics|/healthz|"
                                   r"/readyz)", text)):
            with self.subTest(path):
                self.assertIn(re.sub(r"\{[a-z]+\}", "{}", path), documented)

    def test_every_problem_schema_is_answered_somewhere(self):
        """Each Problem.<slug> is reachable from some operation's responses, except the two a
        listener answers before any request is parsed."""
        text = json.dumps(SPEC["paths"]) + json.dumps(SPEC["components"]["responses"])
        for name in SPEC["components"]["schemas"]:
            if name.startswith("Problem.") and name not in (
                    "Problem.tls-on-plain-port", "Problem.plain-http-on-tls-port"):
                self.assertIn(f"#/components/schemas/{name}\"", text, name)


CONFIG = """listen: 127.0.0.1:{port}
admin_listen: 127.0.0.1:{admin}
data_dir: {workdir}/data
threads: 2
access_log:
  path: ""
backends:
  files:
    kind: filesystem
    root: {workdir}/files
  api:
    kind: http
    url: http://127.0.0.1:{dead_port}
routes:
  - name: files
    prefix: /files/
    backend: files
    fence_key: "fs:{{segment:2}}"
    idempotency:
      mode: store
      methods: [PUT]
  - name: signed
    prefix: /signed/
    backend: files
    fence_key: "signed:{{segment:2}}"
    require_signed_tokens: true
  - name: bounded
    prefix: /bounded/
    backend: files
    fence_key: "bounded:{{segment:2}}"
    max_token_advance: 10
  - name: api
    prefix: /api/
    backend: api
    fence_key: "api:{{segment:2}}"
locks:
  enabled: true
  prefix: /locks/
  max_waiters: 1
  rules:
    - match: "job-*"
      fence_keys: ["fs:{{name}}"]
    - match: "sig-*"
      fence_keys: ["signed:{{name}}"]
    - match: "q-*"
      quarantine: 60s
  signing:
    key_id: k1
    keys:
      - id: k1
        secret: "openapi-test-signing-key-0123456789abcdef"
"""


class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)


def send(port, method, path, headers=None, body=b"", read_body=True):
    """headers: a dict, or a list of (name, value) pairs (a field may repeat; a Host of its own
    replaces http.client's)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        fields = list(headers.items() if isinstance(headers, dict) else headers or [])
        names = {name.lower() for name, _ in fields}
        conn.putrequest(method, path, skip_host="host" in names, skip_accept_encoding=True)
        if (body or method in ("PUT", "POST", "PATCH")) and "content-length" not in names:
            fields.append(("Content-Length", str(len(body))))
        for name, value in fields:
            conn.putheader(name, value)
        conn.endheaders(body if body else None)
        response = conn.getresponse()
        data = response.read() if read_body else b""
        return Answer(response.status, response.headers, data)
    finally:
        conn.close()


def media_type(value):
    return value.split(";", 1)[0].strip().lower()


COVERED = {}  # operationId -> the statuses the live tests saw it answer


class GatewayCase(unittest.TestCase):
    """A real gateway started from CONFIG_TEMPLATE, and the check of its answers."""

    CONFIG_TEMPLATE = None

    @classmethod
    def setUpClass(cls):
        cls.workdir = tempfile.mkdtemp(prefix="fencegate-openapi-")
        cls.port, cls.admin = free_port(), free_port()
        os.makedirs(os.path.join(cls.workdir, "files"))
        cls.config_path = os.path.join(cls.workdir, "fencegate.yaml")
        cls.config = cls.CONFIG_TEMPLATE.format(port=cls.port, admin=cls.admin,
                                                workdir=cls.workdir, dead_port=free_port())
        with open(cls.config_path, "w") as f:
            f.write(cls.config)
        cls.log_path = os.path.join(cls.workdir, "fencegate.out")
        cls.log = open(cls.log_path, "wb")
        cls.proc = subprocess.Popen([BINARY, "--config", cls.config_path], stdout=cls.log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_until(cls._listening, "fencegate listening", DEADLINE)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def _listening(cls):
        with open(cls.log_path, "rb") as log:
            text = log.read()
        if cls.proc.poll() is not None:
            raise AssertionError("fencegate exited:\n" + text.decode(errors="replace"))
        return b"fencegate listening" in text

    @classmethod
    def tearDownClass(cls):
        if cls.proc.poll() is None:
            os.killpg(cls.proc.pid, signal.SIGTERM)
            try:
                cls.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(cls.proc.pid, signal.SIGKILL)
                cls.proc.wait()
        cls.log.close()
        if os.environ.get("KEEP_OPENAPI_WORKDIR") is None:
            shutil.rmtree(cls.workdir, ignore_errors=True)

    # --- checking an answer against the document -------------------------------------------

    def check(self, op_id, answer, expect_status=None, expect_type=None):
        """The answer is one the document allows for op_id; with expect_status/expect_type, also
        the one this case is about (so that a case cannot pass by meeting another refusal)."""
        path, method, op = OPERATIONS[op_id]
        where = f"{op_id} ({method.upper()} {path}) answered {answer.status}"
        if expect_status is not None:
            self.assertEqual(answer.status, expect_status, f"{where}: {answer.body[:500]!r}")
        responses = op["responses"]
        status = str(answer.status)
        response = responses.get(status) or responses.get(status[0] + "XX") or \
            responses.get("default")
        self.assertIsNotNone(response, f"{where}: status not documented; {answer.body[:500]!r}")
        response = deref(response)
        COVERED.setdefault(op_id, set()).add(answer.status)
        content = response.get("content")
        if not content:
            return answer  # the backend's own answer: any body
        content_type = answer.headers.get("Content-Type", "")
        media = None
        for key in content:
            if key.lower() == content_type.lower() or (
                    ";" not in key and media_type(key) == media_type(content_type)):
                media = content[key]
        self.assertIsNotNone(media, f"{where}: content type {content_type!r} not one of "
                                    f"{list(content)}")
        schema = media.get("schema")
        if schema is None or not answer.body:
            if schema is not None and media_type(content_type).endswith("json"):
                self.fail(f"{where}: empty JSON body")
            return answer
        if media_type(content_type).endswith("json"):
            body = json.loads(answer.body)
        else:
            body = answer.body.decode()
        validator = Validator(schema, resolver=jsonschema.RefResolver("", SPEC))
        errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
        if errors:
            self.fail(f"{where}: body does not validate:\n" +
                      "\n".join(f"  at {list(e.absolute_path)}: {e.message[:300]}"
                                for e in errors[:5]) + f"\nbody: {answer.body[:800]!r}")
        if expect_type is not None:
            self.assertEqual(body.get("type"), PROBLEM_PREFIX + expect_type, where)
        return answer

    def traffic(self, method, path, headers=None, body=b""):
        answer = send(self.port, method, path, headers, body)
        self.assertTrue(answer.headers.get("X-Request-Id"), f"{method} {path}: no X-Request-Id")
        return answer

    def admin_call(self, method, path, body=None, read_body=True, headers=None):
        data = json.dumps(body).encode() if body is not None else b""
        headers = dict(headers or {})
        if data:
            headers["Content-Type"] = "application/json"
        return send(self.admin, method, path, headers, data, read_body)

    def acquire(self, name, body=None):
        data = json.dumps(body if body is not None else {}).encode()
        return self.traffic("POST", f"/locks/{name}", {"Content-Type": "application/json"}, data)

    def owner(self, name, action, owner_token):
        return self.traffic("POST", f"/locks/{name}/{action}",
                            {"Content-Type": "application/json"},
                            json.dumps({"owner_token": owner_token}).encode())



class LiveTest(GatewayCase):
    """Drives every operation of the document against a real gateway."""

    CONFIG_TEMPLATE = CONFIG

    def test_fenced_writes_and_their_refusals(self):
        put = lambda path, headers, body=b"x": self.traffic("PUT", path, headers, body)  # noqa
        self.check("fencedPut", put("/files/w/a", {}), 428, "missing-token")
        self.check("fencedPut", put("/files/w/a", {"Fencing-Token": "x1"}), 400, "invalid-token")
        self.check("fencedPut", put("/files/w/a", {"Fencing-Token": "5"}), 201)
        self.check("fencedPut", put("/files/w/a", {"Fencing-Token": "5"}), 204)
        self.check("fencedPut", put("/files/w/a", {"Fencing-Token": "4"}), 409, "stale-token")
        self.check("fencedPut", put("/files/", {"Fencing-Token": "5"}), 400, "no-fence-key")
        self.check("fencedPut", put("/elsewhere/a", {"Fencing-Token": "5"}), 404, "no-route")
        self.check("fencedPut", put("/bounded/b/a", {"Fencing-Token": "50"}), 403,
                   "token-advance-too-large")
        self.check("fencedPut", put("/api/k/a", {"Fencing-Token": "5"}), 503,
                   "no-healthy-backend")
        self.check("fencedPut", put("/files/w/b", {"Fencing-Token": "5",
                                                   "Idempotency-Key": "bad key"}),
                   400, "idempotency-key-invalid")
        self.check("fencedPut", put("/files/w/c", {"Fencing-Token": "5",
                                                   "Idempotency-Key": "openapi-k1"}), 201)
        replay = self.check("fencedPut", put("/files/w/c", {"Fencing-Token": "5",
                                                            "Idempotency-Key": "openapi-k1"}), 201)
        self.assertEqual(replay.headers.get("Idempotency-Replayed"), "?1")
        self.check("fencedPut", put("/files/w/d", {"Fencing-Token": "5",
                                                   "Idempotency-Key": "openapi-k1"}),
                   422, "idempotency-key-reused")
        self.check("fencedPost", self.traffic("POST", "/files/w/a", {"Fencing-Token": "5"}),
                   405, "method-not-allowed")
        self.check("fencedPatch", self.traffic("PATCH", "/files/w/a"), 428, "missing-token")
        self.check("fencedDelete", self.traffic("DELETE", "/files/w/a", {"Fencing-Token": "5"}),
                   204)
        self.check("fencedDelete", self.traffic("DELETE", "/files/w/a", {"Fencing-Token": "5"}),
                   404, "not-found")

    def test_malformed_requests(self):
        put = lambda headers: self.traffic("PUT", "/files/m/a", headers, b"x")  # noqa: E731
        self.check("fencedPut", put({"Fencing_Token": "1"}), 400, "underscore-in-header-name")
        self.check("fencedPut", put([("Host", "a.example"), ("Host", "b.example"),
                                     ("Fencing-Token", "1")]), 400, "bad-host")
        self.check("fencedPut", put([("Fencing-Token", "1"), ("Fencing-Token", "2")]), 400,
                   "invalid-token")
        # Without a body: the gateway answers and closes before reading one.
        self.check("read", self.traffic("GET", "/files/m/a", {"X-Padding": "p" * 17000}), 431,
                   "request-header-too-large")

    def test_why_a_token_is_stale(self):
        """stale_reason tells a lease that ran out from a release (LOCKS_AND_TOKENS.md)."""
        for name, end, reason in (("job-expired", "expire", "lease-expired"),
                                  ("job-released", "release", "released")):
            grant = self.check("acquireLock", self.acquire(name, {"ttl_ms": 100}), 200).json()
            token = str(grant["fencing_token"])
            self.check("fencedPut", self.traffic("PUT", f"/files/{name}/a",
                                                 {"Fencing-Token": token}), 201)
            if end == "release":
                self.check("releaseLock", self.owner(name, "release", grant["owner_token"]), 200)
            else:
                wait_until(lambda: not self.traffic("GET", f"/locks/{name}").json()["held"],
                           "the 100 ms lease ended", DEADLINE)
            self.check("acquireLock", self.acquire(name), 200)
            refusal = self.check("fencedPut", self.traffic("PUT", f"/files/{name}/a",
                                                           {"Fencing-Token": token}),
                                 409, "stale-token").json()
            self.assertEqual(refusal["stale_reason"], reason)

    def test_reads(self):
        self.check("fencedPut", self.traffic("PUT", "/files/r/a", {"Fencing-Token": "1"}, b"y"),
                   201)
        self.assertEqual(self.check("read", self.traffic("GET", "/files/r/a"), 200).body, b"y")
        self.check("read", self.traffic("GET", "/files/r/none"), 404, "not-found")
        self.check("read", self.traffic("GET", "/nowhere"), 404, "no-route")
        self.check("read", self.traffic("GET", "/files/r%2Fa"), 400, "bad-path")

    def test_stale_token_after_a_forced_release(self):
        grant = self.check("acquireLock", self.acquire("job-forced"), 200).json()
        token = str(grant["fencing_token"])
        self.check("fencedPut", self.traffic("PUT", "/files/job-forced/a",
                                             {"Fencing-Token": token}), 201)
        released = self.check("forceReleaseLock", self.admin_call(
            "POST", "/admin/locks/job-forced/force-release",
            {"reason": "openapi test", "operator": "tester"}), 200).json()
        refusal = self.check("fencedPut", self.traffic("PUT", "/files/job-forced/a",
                                                       {"Fencing-Token": token}),
                             409, "stale-token").json()
        self.assertEqual(refusal["stale_reason"], "force-released")
        self.assertEqual(refusal["audit_id"], released["sequence"])
        self.check("forceReleaseLock", self.admin_call(
            "POST", "/admin/locks/job-forced/force-release",
            {"reason": "again", "operator": "tester"}), 404, "lock-not-held")
        self.check("forceReleaseLock", self.admin_call(
            "POST", "/admin/locks/job-forced/force-release", {"operator": "tester"}),
            400, "bad-request")
        self.check("forceReleaseLock", self.admin_call(
            "GET", "/admin/locks/job-forced/force-release"), 405, "method-not-allowed")
        audit = self.check("listLockAudit", self.admin_call("GET", "/admin/lock-audit?limit=5"),
                           200).json()
        self.assertIn(released["sequence"], [record["sequence"] for record in audit])
        self.check("listLockAudit", self.admin_call("GET", "/admin/lock-audit?limit=0"), 400,
                   "bad-request")
        self.check("renewLock", self.owner("job-forced", "renew", grant["owner_token"]), 410,
                   "lock-lost")

    def test_signed_tokens(self):
        grant = self.check("acquireLock", self.acquire("sig-a"), 200).json()
        token, signature = str(grant["fencing_token"]), grant["fencing_token_signature"]
        self.check("fencedPut", self.traffic("PUT", "/signed/sig-a/f", {
            "Fencing-Token": token, "Fencing-Token-Signature": signature}), 201)
        self.check("fencedPut", self.traffic("PUT", "/signed/sig-a/f", {"Fencing-Token": token}),
                   403, "unsigned-token")
        self.check("fencedPut", self.traffic("PUT", "/signed/sig-a/f", {
            "Fencing-Token": token, "Fencing-Token-Signature": "kid=k1"}),
            400, "invalid-token-signature")
        self.check("fencedPut", self.traffic("PUT", "/signed/sig-a/f", {
            "Fencing-Token": str(grant["fencing_token"] + 1),
            "Fencing-Token-Signature": signature}), 403, "forged-token")
        self.check("fencedPut", self.traffic("PUT", "/signed/sig-b/f", {
            "Fencing-Token": token, "Fencing-Token-Signature": signature}),
            403, "token-scope-mismatch")
        renewed = self.check("renewLock", self.owner("sig-a", "renew", grant["owner_token"]),
                             200).json()
        self.assertIn("fencing_token_signature", renewed)
        # A lease that ended: its signature has expired.
        short = self.check("acquireLock", self.acquire("sig-short", {"ttl_ms": 100}), 200).json()
        wait_until(lambda: not self.traffic("GET", "/locks/sig-short").json()["held"],
                   "the 100 ms lease ended", DEADLINE)
        self.check("fencedPut", self.traffic("PUT", "/signed/sig-short/f", {
            "Fencing-Token": str(short["fencing_token"]),
            "Fencing-Token-Signature": short["fencing_token_signature"]}), 403, "expired-token")

    def test_lock_api(self):
        grant = self.check("acquireLock", self.acquire("job-api", {"ttl_ms": 30000}), 200).json()
        held = self.check("acquireLock", self.acquire("job-api"), 409, "lock-held")
        self.assertTrue(held.headers.get("Retry-After"))
        self.check("acquireLock", self.acquire("bad%20name"), 400, "invalid-lock-name")
        self.check("acquireLock", self.acquire("job-api", {"ttl": 1}), 400, "bad-request")
        self.check("acquireLock", self.traffic("POST", "/locks/job-api",
                                               {"Content-Type": "application/json"},
                                               b'{"ttl_ms":' + b" " * 5000 + b"1}"),
                   413, "request-body-too-large")
        state = self.check("getLock", self.traffic("GET", "/locks/job-api"), 200).json()
        self.assertTrue(state["held"])
        self.check("getLock", self.traffic("GET", "/locks/job-never"), 200)
        self.check("getLock", self.traffic("GET", "/locks/bad%20name"), 400, "invalid-lock-name")
        self.check("renewLock", self.owner("job-api", "renew", grant["owner_token"]), 200)
        self.check("renewLock", self.owner("job-api", "renew", "0" * 32), 410, "lock-lost")
        self.check("renewLock", self.traffic("POST", "/locks/job-api/renew", {}, b"{}"), 400,
                   "bad-request")
        self.check("releaseLock", self.traffic("POST", "/locks/job-api/release", {}, b"[]"), 400,
                   "bad-request")
        released = self.check("releaseLock", self.owner("job-api", "release",
                                                        grant["owner_token"]), 200).json()
        self.assertTrue(released["released"])
        again = self.check("releaseLock", self.owner("job-api", "release", grant["owner_token"]),
                           200).json()
        self.assertFalse(again["released"])

    def test_waiters_and_lock_delay(self):
        first = self.check("acquireLock", self.acquire("job-wait"), 200).json()
        waited = {}

        def wait_for_it():
            waited["answer"] = self.acquire("job-wait", {"wait_ms": 20000})

        waiter = threading.Thread(target=wait_for_it)
        waiter.start()
        try:
            wait_until(lambda: self.traffic("GET", "/locks/job-wait").json()["waiters"] == 1,
                       "one waiter queued", DEADLINE)
            self.check("acquireLock", self.acquire("job-wait", {"wait_ms": 20000}), 429,
                       "too-many-waiters")
        finally:
            self.owner("job-wait", "release", first["owner_token"])
            waiter.join(DEADLINE)
        self.check("acquireLock", waited["answer"], 200)

        # A lease that expires without a release puts the lock in lock-delay (rule q-*).
        self.check("acquireLock", self.acquire("q-delay", {"ttl_ms": 100}), 200)
        wait_until(lambda: not self.traffic("GET", "/locks/q-delay").json()["held"],
                   "the 100 ms lease ended", DEADLINE)
        self.check("acquireLock", self.acquire("q-delay"), 409, "lock-quarantined")
        lock = self.check("getAdminLock", self.admin_call("GET", "/admin/locks/q-delay"),
                          200).json()
        self.assertGreater(lock["quarantine_left_ms"], 0)

    def test_admin_locks(self):
        self.check("acquireLock", self.acquire("job-admin"), 200)
        locks = self.check("listLocks", self.admin_call("GET", "/admin/locks"), 200).json()
        self.assertIn("job-admin", [lock["lock"] for lock in locks["locks"]])
        self.check("listLocks", self.admin_call("GET", "/admin/locks?limit=1"), 400,
                   "bad-request")
        lock = self.check("getAdminLock", self.admin_call("GET", "/admin/locks/job-admin"),
                          200).json()
        self.assertIsNotNone(lock["holder"])
        self.check("getAdminLock", self.admin_call("GET", "/admin/locks/job-none"), 404,
                   "lock-not-found")
        self.check("getAdminLock", self.admin_call("GET", "/admin/locks/bad%20name"), 400,
                   "invalid-lock-name")

    def test_admin_fences_and_repairs(self):
        self.check("fencedPut", self.traffic("PUT", "/files/rep/a", {"Fencing-Token": "9"}), 201)
        fences = self.check("listFences",
                            self.admin_call("GET", "/admin/fences?prefix=fs:&limit=1"), 200).json()
        self.assertEqual(len(fences["fences"]), 1)
        self.check("listFences", self.admin_call("GET", "/admin/fences?bogus=1"), 400,
                   "bad-request")
        fence = self.check("getFence", self.admin_call("GET", "/admin/fences/fs%3Arep"),
                           200).json()
        self.assertEqual(fence["highest_token"], 9)
        self.check("getFence", self.admin_call("GET", "/admin/fences/never-fenced"), 404,
                   "fence-not-found")
        repair = {"highest_token": 3, "reason": "openapi test", "operator": "tester"}
        self.check("repairFence", self.admin_call("POST", "/admin/fences/fs%3Arep/repair",
                                                  dict(repair, highest_token=20)),
                   409, "repair-not-lower")
        self.check("repairFence", self.admin_call("POST", "/admin/fences/never-fenced/repair",
                                                  repair), 404, "fence-not-found")
        self.check("repairFence", self.admin_call("POST", "/admin/fences/fs%3Arep/repair",
                                                  {"highest_token": 3}), 400, "bad-request")
        self.check("repairFence", self.admin_call("POST", "/admin/fences/fs%3Arep/repair",
                                                  repair), 200)
        records = self.check("listFenceRepairs", self.admin_call("GET", "/admin/fence-repairs"),
                             200).json()
        self.assertEqual(records[0]["fence_key"], "fs:rep")
        self.check("listFenceRepairs", self.admin_call("GET", "/admin/fence-repairs?x=1"), 400,
                   "bad-request")

    def test_admin_rejections_summary_backends(self):
        self.traffic("PUT", "/files/rej/a", {"Fencing-Token": "2"})
        self.traffic("PUT", "/files/rej/a", {"Fencing-Token": "1"})
        page = self.check("listRejections", self.admin_call(
            "GET", "/admin/rejections?fence_key=fs:rej&limit=1"), 200).json()
        self.assertEqual(page["rejections"][0]["reason"], "stale_token")
        self.check("listRejections", self.admin_call("GET", "/admin/rejections?reasons=x"), 400,
                   "bad-request")
        self.check("getSummary", self.admin_call("GET", "/admin/summary"), 200)
        self.check("getSummary", self.admin_call("GET", "/admin/summary?x=1"), 400, "bad-request")
        self.check("getSummary", self.admin_call("POST", "/admin/summary"), 405,
                   "method-not-allowed")
        backends = self.check("listBackends", self.admin_call("GET", "/admin/backends"),
                              200).json()
        self.assertEqual({b["kind"] for b in backends["backends"]}, {"filesystem", "http"})
        self.check("listBackends", self.admin_call("GET", "/admin/backends?backend=api"), 200)
        self.check("listBackends", self.admin_call("GET", "/admin/backends?backend=nope"), 404,
                   "not-found")
        self.check("getCluster", self.admin_call("GET", "/admin/cluster"), 404, "not-found")

    def test_health_metrics_events(self):
        self.check("healthz", self.admin_call("GET", "/healthz"), 200)
        self.check("readyz", self.admin_call("GET", "/readyz"), 200)
        metrics = self.check("metrics", self.admin_call("GET", "/metrics"), 200)
        self.assertIn(b"fencegate_writes_rejected_total", metrics.body)
        # The event stream never ends: the headers are the answer.
        self.check("events", self.admin_call("GET", "/admin/events", read_body=False), 200)

    def test_reload(self):
        self.check("reload", self.admin_call("GET", "/admin/reload"), 405, "method-not-allowed")
        try:
            with open(self.config_path, "w") as f:
                f.write(self.config.replace("fence_key: \"fs:", "fence_key: \"fs:{segment:9}"
                                            ).replace("backend: files", "backend: missing", 1))
            refusal = self.check("reload", self.admin_call("POST", "/admin/reload"), 422,
                                 "config-invalid").json()
            self.assertTrue(refusal["errors"])
        finally:
            with open(self.config_path, "w") as f:
                f.write(self.config)
        self.check("reload", self.admin_call("POST", "/admin/reload"), 200)


GUARDED_CONFIG = """listen: 127.0.0.1:{port}
admin_listen: 127.0.0.1:{admin}
data_dir: {workdir}/data
threads: 1
access_log:
  path: ""
backends:
  files:
    kind: filesystem
    root: {workdir}/files
routes:
  - name: files
    prefix: /files/
    backend: files
    fence_key: "fs:{{segment:2}}"
    policy:
      read: ["*"]
      write: [writer]
      advance:
        writer: ["fs:"]
auth:
  principals:
    - name: writer
      api_key_sha256: ["%s"]
    - name: reader
      api_key_sha256: ["%s"]
locks:
  enabled: true
  policy:
    read: ["*"]
    acquire:
      writer: ["job-*"]
admin:
  principals:
    - name: operator
      api_key_sha256: ["%s"]
""" % tuple(hashlib.sha256(key).hexdigest() for key in (b"writer-key", b"reader-key",
                                                        b"admin-key"))
WRITER = {"Authorization": "Bearer writer-key"}
READER = {"Authorization": "Bearer reader-key"}
OPERATOR = {"Authorization": "Bearer admin-key"}


class GuardedTest(GatewayCase):
    """Credentials: a route policy, locks.policy and admin principals (401 and 403)."""

    CONFIG_TEMPLATE = GUARDED_CONFIG

    def test_traffic_credentials(self):
        put = lambda headers: self.traffic("PUT", "/files/g/a", headers, b"x")  # noqa: E731
        self.check("fencedPut", put({"Fencing-Token": "1"}), 401, "unauthenticated")
        self.check("fencedPut", put(dict(READER, **{"Fencing-Token": "1"})), 403, "forbidden")
        self.check("fencedPut", put(dict(WRITER, **{"Fencing-Token": "1"})), 201)
        self.check("read", self.traffic("GET", "/files/g/a"), 401, "unauthenticated")
        self.check("read", self.traffic("GET", "/files/g/a", READER), 200)

    def test_lock_credentials(self):
        self.check("getLock", self.traffic("GET", "/locks/job-g"), 401, "unauthenticated")
        self.check("getLock", self.traffic("GET", "/locks/job-g", READER), 200)
        self.check("acquireLock", self.traffic("POST", "/locks/job-g", READER, b"{}"), 403,
                   "forbidden")
        grant = self.check("acquireLock", self.traffic("POST", "/locks/job-g", WRITER, b"{}"),
                           200).json()
        body = json.dumps({"owner_token": grant["owner_token"]}).encode()
        self.check("renewLock", self.traffic("POST", "/locks/job-g/renew", {}, body), 401,
                   "unauthenticated")
        self.check("releaseLock", self.traffic("POST", "/locks/job-g/release", READER, body), 403,
                   "forbidden")
        self.check("releaseLock", self.traffic("POST", "/locks/job-g/release", WRITER, body), 200)

    def test_admin_credentials(self):
        self.check("healthz", self.admin_call("GET", "/healthz"), 200)
        self.check("readyz", self.admin_call("GET", "/readyz"), 200)
        self.check("listFences", self.admin_call("GET", "/admin/fences"), 401, "unauthenticated")
        self.check("metrics", self.admin_call("GET", "/metrics"), 401, "unauthenticated")
        self.check("listFences", self.admin_call("GET", "/admin/fences", headers=OPERATOR), 200)
        self.check("forceReleaseLock", self.admin_call(
            "POST", "/admin/locks/job-none/force-release", {"reason": "no operator needed"},
            headers=OPERATOR), 404, "lock-not-held")


class CoverageTest(unittest.TestCase):
    """After LiveTest (load_tests orders the classes): no documented operation went undriven."""

    def test_every_operation_was_driven(self):
        missing = sorted(set(OPERATIONS) - set(COVERED))
        self.assertEqual(missing, [], "operations the live test never drove")


def load_tests(loader, standard_tests, pattern):
    suite = unittest.TestSuite()
    for case in (DocumentTest, LiveTest, GuardedTest, CoverageTest):
        suite.addTests(loader.loadTestsFromTestCase(case))
    return suite


if __name__ == "__main__":
    unittest.main(verbosity=2)
