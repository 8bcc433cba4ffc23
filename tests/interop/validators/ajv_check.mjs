// Ajv's verdict on each case of tests/tests/it/validator_agreement.rs.
// Input (argv[2]): {"schemas": {tool: inputSchema}, "cases": [[tool, "instance as JSON text"], ...]}.
// Output (stdout): a JSON array, one boolean per case: whether Ajv accepts it.
import { readFileSync } from "node:fs";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
// Draft-07 (Ajv's default), patterns compiled with the `u` flag (Ajv's default), formats checked.
// `strict: false` ignores the annotation keywords Trails adds (`trails:node_type`, `readOnly`).
const ajv = new Ajv({ strict: false });
addFormats(ajv);
// ajv-formats has no `iri`: accepted unchecked (the test lists it among the formats aside).
ajv.addFormat("iri", true);
const validators = {};
for (const [name, schema] of Object.entries(input.schemas)) validators[name] = ajv.compile(schema);
const verdicts = input.cases.map(([name, text]) => validators[name](JSON.parse(text)));
process.stdout.write(JSON.stringify(verdicts));
