#!/usr/bin/python3
"""A CRI client for the engine tests, as the kubelet calls containerd:
gRPC over the CRI socket through grpcio, the messages of cri.proto through
protobuf. Usage: cri_client.py SOCKET METHOD < REQUEST.json; prints the
reply as JSON (proto field names). A gRPC error: its code and details on
stderr, exit 1."""
import importlib
import json
import os
import subprocess
import sys
import tempfile

import grpc
from google.protobuf import json_format

HERE = os.path.dirname(os.path.abspath(__file__))


def load_messages():
    # protoc writes cri_pb2.py once per test run into a directory of its own.
    out = os.environ.get("CRI_PB_DIR") or tempfile.mkdtemp(prefix="moat-cri-")
    if not os.path.exists(os.path.join(out, "cri_pb2.py")):
        os.makedirs(out, exist_ok=True)
        subprocess.run(["protoc", "-I", HERE, "--python_out", out, "cri.proto"],
                       check=True)
    sys.path.insert(0, out)
    return importlib.import_module("cri_pb2")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sock, method = sys.argv[1], sys.argv[2]
    pb = load_messages()
    request = json_format.ParseDict(json.load(sys.stdin),
                                    getattr(pb, method + "Request")())
    reply_type = getattr(pb, method + "Response")
    with grpc.insecure_channel("unix://" + sock) as channel:
        call = channel.unary_unary(
            "/runtime.v1.RuntimeService/" + method,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=reply_type.FromString)
        try:
            reply = call(request, timeout=60)
        except grpc.RpcError as e:
            print(f"{e.code().name}: {e.details()}", file=sys.stderr)
            sys.exit(1)
    # Bytes (ExecSync's stdout) as text, not base64, for the tests to read.
    out = json_format.MessageToDict(reply, preserving_proto_field_name=True,
                                    including_default_value_fields=True,
                                    use_integers_for_enums=True)
    for key, value in list(out.items()):
        field = reply.DESCRIPTOR.fields_by_name.get(key)
        if field is not None and field.type == field.TYPE_BYTES:
            out[key] = getattr(reply, key).decode("utf-8", "replace")
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
