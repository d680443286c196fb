#!/usr/bin/python3
"""A TANGO REST API (v1.1 / rc4, spec section h) bridge for tests, in front of
a real device server reached with PyTango and no database.

Implements the subset the accel-agent adapter uses, with the spec's shapes:
device list with wildcard (paged with ?range=a-b as the reference server's
PartitionProvider pages it), device state, attribute list (with info),
attribute info, read one / read several (errors in place, DevError fields
`desc`), write one with read-back, HTTP Basic auth, error bodies
{"errors":[{reason, description, severity, origin}], "quality":"FAILURE"}
with 400 (Tango error), 401, 404.

Usage: tango_rest_bridge.py --tango-port P --devices sys/tg_test/1 [--user U --password W]
Prints "listening <port>" when ready; binds 127.0.0.1; exits when stdin
closes (its parent died) or after --lifetime seconds.
"""
import argparse
import base64
import fnmatch
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import tango

VERSIONS = ("rc4", "v10", "v11")
NOT_FOUND = ("API_AttrNotFound", "API_DeviceNotDefined", "API_DeviceNotExported")


class TangoHttpError(Exception):
    def __init__(self, status, reason, description, origin="bridge"):
        super().__init__(description)
        self.status, self.reason, self.description, self.origin = status, reason, description, origin


def plain(v):
    """numpy and Tango values as JSON-able Python values."""
    if hasattr(v, "tolist"):
        return v.tolist()
    if isinstance(v, tango.DevState):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def dev_failed(e):
    err = e.args[0] if e.args else None
    if err is None:
        return ("DevFailed", str(e), "ERR", "unknown")
    return (err.reason, err.desc, str(err.severity), err.origin)


class Bridge:
    def __init__(self, tango_port, devices, user, password):
        self.tango_port = tango_port
        self.devices = devices
        self.auth = None
        if user:
            self.auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.proxies = {}
        self.lock = threading.Lock()

    def proxy(self, device):
        if device.lower() not in [d.lower() for d in self.devices]:
            raise TangoHttpError(404, "API_DeviceNotDefined", f"device {device} not defined")
        with self.lock:
            if device not in self.proxies:
                self.proxies[device] = tango.DeviceProxy(
                    f"tango://127.0.0.1:{self.tango_port}/{device}#dbase=no")
            return self.proxies[device]

    def info(self, device, attr):
        try:
            cfg = self.proxy(device).get_attribute_config(attr)
        except tango.DevFailed as e:
            reason, desc, _, origin = dev_failed(e)
            raise TangoHttpError(404, reason, desc, origin)
        return info_json(cfg)

    def value(self, host, device, attr, with_host=True):
        p = self.proxy(device)
        da = p.read_attribute(attr)
        value = plain(da.value)
        cfg = p.get_attribute_config(attr)
        if cfg.data_type == tango.CmdArgType.DevState and value is not None:
            value = str(tango.DevState.values[int(value)])
        if cfg.data_type == tango.CmdArgType.DevEnum and isinstance(value, int):
            labels = list(cfg.enum_labels)
            value = labels[value] if 0 <= value < len(labels) else value
        if cfg.data_format == tango.AttrDataFormat.IMAGE and isinstance(value, list):
            value = {"data": value, "width": da.dim_x, "height": da.dim_y}
        out = {"name": da.name, "value": value, "quality": str(da.quality),
               "timestamp": int(da.time.totime() * 1000)}
        if with_host:
            out = {"name": da.name, "host": host, "device": device, **{k: out[k] for k in ("value", "quality", "timestamp")}}
        return out

    def write(self, device, attr, text):
        p = self.proxy(device)
        cfg = p.get_attribute_config(attr)
        p.write_attribute(attr, convert(cfg, text))


def info_json(cfg):
    return {
        "name": cfg.name,
        "writable": str(cfg.writable),
        "data_format": str(cfg.data_format),
        "data_type": str(tango.CmdArgType.values[cfg.data_type]),
        "max_dim_x": cfg.max_dim_x,
        "max_dim_y": cfg.max_dim_y,
        "description": cfg.description,
        "label": cfg.label,
        "unit": cfg.unit,
        "standard_unit": cfg.standard_unit,
        "display_unit": cfg.display_unit,
        "format": cfg.format,
        "min_value": cfg.min_value,
        "max_value": cfg.max_value,
        "min_alarm": cfg.min_alarm,
        "max_alarm": cfg.max_alarm,
        "writable_attr_name": cfg.writable_attr_name,
        "level": str(cfg.disp_level),
        "enum_label": list(cfg.enum_labels),
    }


def convert(cfg, text):
    """What the reference server's ConvertUtils.convert(value, attrType) does for scalars."""
    t = tango.CmdArgType.values[cfg.data_type]
    if t == tango.CmdArgType.DevString:
        return text
    if t == tango.CmdArgType.DevBoolean:
        return text.strip().lower() in ("true", "1")
    if t == tango.CmdArgType.DevEnum:
        labels = list(cfg.enum_labels)
        return labels.index(text) if text in labels else int(text)
    if t in (tango.CmdArgType.DevDouble, tango.CmdArgType.DevFloat):
        return float(text)
    try:
        return int(text)
    except ValueError:
        raise TangoHttpError(400, "IllegalArgument", f"cannot convert {text!r} to {t}")


def make_handler(bridge):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send_json(self, status, body, headers=None):
            data = json.dumps(body).encode()
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def send_page(self, items, q, with_host):
            # ?range=a-b as the reference server's PartitionProvider: end exclusive, 206 with
            # Content-Range, 416 for an end past the list or not after the start; rc4 adds
            # a partial_content element.
            size = len(items)
            if "range" not in q:
                return self.send_json(200, items, {"X-size": str(size), "Accept-Ranges": "items"})
            try:
                start, end = (int(x) for x in q["range"][0].split("-", 1))
            except ValueError:
                raise TangoHttpError(416, "IllegalArgumentException", "range must be start-end")
            if start < 0 or end > size or start >= end:
                raise TangoHttpError(416, "IllegalArgumentException",
                                     f"end of the range can not be greater than total size={size}"
                                     if end > size else "start of the range can not be greater or equal to its end")
            page = items[start:end]
            if not with_host:
                page.append({"name": "partial_content", "total": size, "offset": start, "limit": end, "_links": {}})
            return self.send_json(206, page, {"Content-Range": f"items {start}-{end}/{size}",
                                              "Accept-Ranges": "items"})

        def fail(self, status, reason, description, origin):
            self.send_json(status, {"errors": [{"reason": reason, "description": description,
                                                "severity": "ERR", "origin": origin}],
                                    "quality": "FAILURE", "timestamp": int(time.time() * 1000)})

        def do_GET(self):
            self.route("GET")

        def do_PUT(self):
            self.route("PUT")

        def route(self, method):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            if bridge.auth and self.headers.get("Authorization") != bridge.auth:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="tango"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            url = urllib.parse.urlsplit(self.path)
            q = urllib.parse.parse_qs(url.query, keep_blank_values=True)
            parts = [urllib.parse.unquote(p) for p in url.path.split("/") if p]
            try:
                self.dispatch(method, parts, q)
            except TangoHttpError as e:
                self.fail(e.status, e.reason, e.description, e.origin)
            except tango.DevFailed as e:
                reason, desc, _, origin = dev_failed(e)
                # The spec answers 404 for an unknown device or attribute, 400 for other Tango errors.
                self.fail(404 if reason in NOT_FOUND else 400, reason, desc, origin)

        def dispatch(self, method, parts, q):
            # /tango/rest/{ver}/hosts/{host[;port=p]}/devices/...
            if parts[:2] != ["tango", "rest"] or len(parts) < 5 or parts[2] not in VERSIONS or parts[3] != "hosts":
                raise TangoHttpError(404, "NotFound", f"no resource {self.path}")
            with_host = parts[2] != "rc4"
            host_part = parts[4]
            host, _, port = host_part.partition(";port=")
            host = f"{host}:{port or 10000}"
            if int(port or 10000) != bridge.tango_port:
                raise TangoHttpError(404, "UnknownHost", f"no Tango host {host}")
            rest = parts[5:]
            if rest == ["devices"]:
                wildcard = (q.get("wildcard") or ["*/*/*"])[0]
                names = [d for d in bridge.devices if fnmatch.fnmatch(d.lower(), wildcard.lower())]
                prefix = f"/tango/rest/{parts[2]}/hosts/{host_part}/devices"
                return self.send_page([{"name": d, "alias": None, "href": f"{prefix}/{d}"} for d in names],
                                      q, with_host)
            if len(rest) < 4 or rest[0] != "devices":
                raise TangoHttpError(404, "NotFound", f"no resource {self.path}")
            device = "/".join(rest[1:4])
            sub = rest[4:]
            p = bridge.proxy(device)
            if sub == []:
                return self.send_json(200, {"id": f"{host}/{device}", "name": device, "host": host,
                                            "info": {"name": device, "exported": True, "classname": p.info().dev_class}})
            if sub == ["state"]:
                return self.send_json(200, {"state": str(p.state()), "status": p.status()})
            if sub == ["attributes"]:
                return self.send_json(200, [{"id": f"{host}/{device}/{c.name}", "name": c.name, "device": device,
                                             "host": host, "info": info_json(c)}
                                            for c in p.attribute_list_query_ex()])
            if sub == ["attributes", "value"]:
                if method == "PUT":
                    for k, vs in q.items():
                        if k != "async":
                            bridge.write(device, k, vs[0])
                    names = [k for k in q if k != "async"]
                else:
                    names = q.get("attr", [])
                out = []
                for a in names:
                    try:
                        out.append(bridge.value(host, device, a, with_host=False))
                    except tango.DevFailed as e:
                        reason, desc, sev, origin = dev_failed(e)
                        # Serialised straight from DevError: `desc`, not `description` (spec h.4).
                        out.append({"name": a, "reason": reason, "desc": desc, "severity": sev, "origin": origin})
                return self.send_json(200, out)
            if len(sub) >= 2 and sub[0] == "attributes":
                attr = sub[1]
                if sub[2:] == ["value"]:
                    if method == "PUT":
                        v = (q.get("v") or [None])[0]
                        if v is None:
                            raise TangoHttpError(400, "IllegalArgument", "missing query parameter v")
                        bridge.write(device, attr, v)
                        if q.get("async", ["false"])[0] == "true":
                            self.send_response(204)
                            self.send_header("Content-Length", "0")
                            return self.end_headers()
                    return self.send_json(200, bridge.value(host, device, attr, with_host))
                if sub[2:] == ["info"]:
                    return self.send_json(200, bridge.info(device, attr))
                if sub[2:] == []:
                    return self.send_json(200, {"id": f"{host}/{device}/{attr}", "name": attr, "device": device,
                                                "host": host, "info": bridge.info(device, attr)})
            raise TangoHttpError(404, "NotFound", f"no resource {self.path}")

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tango-port", type=int, required=True)
    ap.add_argument("--devices", required=True, help="comma-separated device names")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--user", default="")
    ap.add_argument("--password", default="")
    ap.add_argument("--lifetime", type=float, default=300)
    a = ap.parse_args()
    bridge = Bridge(a.tango_port, a.devices.split(","), a.user, a.password)
    server = ThreadingHTTPServer(("127.0.0.1", a.port), make_handler(bridge))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"listening {server.server_address[1]}", flush=True)
    # Stop when the parent goes away (stdin closes) or the lifetime ends.
    watcher = threading.Thread(target=lambda: sys.stdin.read(), daemon=True)
    watcher.start()
    watcher.join(a.lifetime)
    server.shutdown()


if __name__ == "__main__":
    main()
