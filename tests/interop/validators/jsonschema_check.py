"""Python `jsonschema`'s verdict on each case of tests/tests/it/validator_agreement.rs.

Input (argv[1]): {"schemas": {tool: inputSchema}, "cases": [[tool, "instance as JSON text"], ...]}.
Output (stdout): a JSON array, one boolean per case: whether jsonschema accepts it.

Draft-07 with its FormatChecker (`date-time` through rfc3339-validator). `pattern` is evaluated
with ECMA-262 semantics by `regress` (with the `u` flag, as Ajv does): JSON Schema specifies
ECMA-262 regexes, and Python's `re` differs from it (`\\d` and `\\w` are Unicode, `$` matches
before a final newline), which would make this a test of `re`, not of the schema.
"""

import json
import sys

import regress
from jsonschema import Draft7Validator, FormatChecker
from jsonschema.exceptions import ValidationError
from jsonschema.validators import extend


def ecma_pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and regress.Regex(pattern, "u").find(instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


Validator = extend(Draft7Validator, {"pattern": ecma_pattern})

with open(sys.argv[1], encoding="utf-8") as f:
    data = json.load(f)
validators = {name: Validator(schema, format_checker=FormatChecker()) for name, schema in data["schemas"].items()}
verdicts = [validators[name].is_valid(json.loads(text)) for name, text in data["cases"]]
json.dump(verdicts, sys.stdout)
