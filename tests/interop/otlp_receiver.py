"""An OTLP/HTTP receiver for the telemetry test (tests/tests/it/telemetry.rs): it accepts
`POST /v1/traces` and `POST /v1/metrics` (protobuf), decodes each with the official OTLP
protobuf definitions (PyPI `opentelemetry-proto`), and appends it as one JSON line to OUT.

    python otlp_receiver.py PORT OUT

Prints "listening" once it serves on 127.0.0.1:PORT.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

SIGNALS = {
    "/v1/traces": ("traces", ExportTraceServiceRequest, ExportTraceServiceResponse),
    "/v1/metrics": ("metrics", ExportMetricsServiceRequest, ExportMetricsServiceResponse),
}


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        signal = SIGNALS.get(self.path)
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        if signal is None or self.headers.get("content-type") != "application/x-protobuf":
            self.send_response(404 if signal is None else 415)
            self.end_headers()
            return
        name, request_type, response_type = signal
        request = request_type()
        request.ParseFromString(body)
        # Ids as lowercase hex, as W3C trace context writes them (protobuf JSON would use base64).
        decoded = MessageToDict(request, preserving_proto_field_name=True)
        for resource in decoded.get("resource_spans", []):
            for scope in resource.get("scope_spans", []):
                for span in scope.get("spans", []):
                    for key in ("trace_id", "span_id", "parent_span_id"):
                        if key in span:
                            span[key] = __import__("base64").b64decode(span[key]).hex()
        with open(OUT, "a", encoding="utf-8") as out:
            out.write(json.dumps({"signal": name, "request": decoded}) + "\n")
        reply = response_type().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    OUT = sys.argv[2]
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver)
    print("listening", flush=True)
    server.serve_forever()
