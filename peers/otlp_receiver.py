"""An OTLP trace receiver for Axon's telemetry tests: OTLP/HTTP (protobuf, POST
/v1/traces) and OTLP/gRPC (TraceService/Export), decoded with OpenTelemetry's own
protocol package (opentelemetry-proto, with grpcio for gRPC; pinned in
peers/requirements-otel.txt). Not a mock: it is the official wire schema and
service definition, and a request it cannot decode is answered with an error.

Every span received is written to OUT as one JSON line:
  {"transport", "service", "scope", "trace_id", "span_id", "parent_span_id",
   "name", "kind", "attributes", "status_code", "events"}

Usage: python otlp_receiver.py OUT   (prints "http=PORT grpc=PORT" when ready)
"""

import json
import sys
import threading
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as svc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc as svc_grpc
from opentelemetry.proto.trace.v1 import trace_pb2

OUT = sys.argv[1]
LOCK = threading.Lock()


def value(v):
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def record(request, transport):
    lines = []
    for rs in request.resource_spans:
        resource = {a.key: value(a.value) for a in rs.resource.attributes}
        for ss in rs.scope_spans:
            for span in ss.spans:
                lines.append(json.dumps({
                    "transport": transport,
                    "service": resource.get("service.name"),
                    "scope": ss.scope.name,
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": trace_pb2.Span.SpanKind.Name(span.kind),
                    "attributes": {a.key: value(a.value) for a in span.attributes},
                    "status_code": trace_pb2.Status.StatusCode.Name(span.status.code),
                    "events": [e.name for e in span.events],
                }))
    with LOCK, open(OUT, "a") as f:
        for line in lines:
            f.write(line + "\n")


class Http(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/v1/traces":
            self.send_response(404)
            self.end_headers()
            return
        if self.headers.get("Content-Type") != "application/x-protobuf":
            self.send_response(415)
            self.end_headers()
            return
        request = svc.ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except Exception:  # a body that is not the protocol's message
            self.send_response(400)
            self.end_headers()
            return
        record(request, "http")
        reply = svc.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


class Grpc(svc_grpc.TraceServiceServicer):
    def Export(self, request, context):
        record(request, "grpc")
        return svc.ExportTraceServiceResponse()


def main():
    http = ThreadingHTTPServer(("127.0.0.1", 0), Http)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    svc_grpc.add_TraceServiceServicer_to_server(Grpc(), server)
    grpc_port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"http={http.server_address[1]} grpc={grpc_port}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
