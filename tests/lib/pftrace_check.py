#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Independent reader of fvbpf's --format pftrace traces.

Decodes with the `protobuf` package, from message descriptors built here
(the subset of Perfetto's schema fvbpf writes, with Perfetto's field
numbers), and checks: every packet parses, slice begin/end balance per
track, every name and category resolves through the sequence's interned
data, timestamps never go back on a sequence.

  pftrace_check.py FILE.pftrace [--json FILE.json | --counts FILE.json]

prints "packets=N slices=N flows_out=N flows_in=N tracks=N bytes=N",
"metadata_bytes=N" (what the segment's metadata annotations take) and
"metadata KEY=VALUE" lines; with --json, the segment slice's annotations
must equal the JSON trace's otherData (keys and values), the slices (track,
name, category, start, end in ns) its "X" events, and its flow counts must
match; with --counts (a JSON trace of another run of the
same workload) the slices counted by name and category must be equal.
"""
import collections
import gzip
import json
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto
OPT, REP = F.LABEL_OPTIONAL, F.LABEL_REPEATED
U64, U32, I64, I32, BOOL, STR, MSG, ENUM, FX64, DBL = (F.TYPE_UINT64, F.TYPE_UINT32, F.TYPE_INT64,
                                                       F.TYPE_INT32, F.TYPE_BOOL, F.TYPE_STRING,
                                                       F.TYPE_MESSAGE, F.TYPE_ENUM, F.TYPE_FIXED64,
                                                       F.TYPE_DOUBLE)
BYTES = F.TYPE_BYTES

# name: [(field, number, type, label, type_name)]
SCHEMA = {
    "Trace": [("packet", 1, MSG, REP, "TracePacket")],
    "TracePacket": [
        ("timestamp", 8, U64, OPT, None), ("timestamp_clock_id", 58, U32, OPT, None),
        ("clock_snapshot", 6, MSG, OPT, "ClockSnapshot"),
        ("trusted_packet_sequence_id", 10, U32, OPT, None),
        ("track_event", 11, MSG, OPT, "TrackEvent"), ("interned_data", 12, MSG, OPT, "InternedData"),
        ("sequence_flags", 13, U32, OPT, None),
        ("trace_packet_defaults", 59, MSG, OPT, "TracePacketDefaults"),
        ("track_descriptor", 60, MSG, OPT, "TrackDescriptor")],
    "ClockSnapshot": [("clocks", 1, MSG, REP, "Clock"), ("primary_trace_clock", 2, U32, OPT, None)],
    "Clock": [("clock_id", 1, U32, OPT, None), ("timestamp", 2, U64, OPT, None),
              ("is_incremental", 3, BOOL, OPT, None), ("unit_multiplier_ns", 4, U64, OPT, None)],
    "TracePacketDefaults": [("timestamp_clock_id", 58, U32, OPT, None),
                            ("track_event_defaults", 11, MSG, OPT, "TrackEventDefaults")],
    "TrackEventDefaults": [("track_uuid", 11, U64, OPT, None)],
    "TrackEvent": [("category_iids", 3, U64, REP, None), ("categories", 22, STR, REP, None),
                   ("name_iid", 10, U64, OPT, None), ("name", 23, STR, OPT, None),
                   ("type", 9, I32, OPT, None), ("track_uuid", 11, U64, OPT, None),
                   ("debug_annotations", 4, MSG, REP, "DebugAnnotation"),
                   ("flow_ids", 47, FX64, REP, None), ("terminating_flow_ids", 48, FX64, REP, None)],
    "DebugAnnotation": [("name", 10, STR, OPT, None), ("name_iid", 1, U64, OPT, None),
                        ("string_value_iid", 17, U64, OPT, None), ("bool_value", 2, BOOL, OPT, None),
                        ("uint_value", 3, U64, OPT, None), ("int_value", 4, I64, OPT, None),
                        ("double_value", 5, DBL, OPT, None), ("string_value", 6, STR, OPT, None),
                        ("dict_entries", 11, MSG, REP, "DebugAnnotation")],
    "InternedData": [("event_categories", 1, MSG, REP, "EventCategory"),
                     ("event_names", 2, MSG, REP, "EventName"),
                     ("debug_annotation_names", 3, MSG, REP, "DebugAnnotationName"),
                     ("debug_annotation_string_values", 29, MSG, REP, "InternedString")],
    "DebugAnnotationName": [("iid", 1, U64, OPT, None), ("name", 2, STR, OPT, None)],
    "InternedString": [("iid", 1, U64, OPT, None), ("str", 2, BYTES, OPT, None)],
    "EventCategory": [("iid", 1, U64, OPT, None), ("name", 2, STR, OPT, None)],
    "EventName": [("iid", 1, U64, OPT, None), ("name", 2, STR, OPT, None)],
    "TrackDescriptor": [("uuid", 1, U64, OPT, None), ("name", 2, STR, OPT, None),
                        ("process", 3, MSG, OPT, "ProcessDescriptor"),
                        ("thread", 4, MSG, OPT, "ThreadDescriptor"),
                        ("parent_uuid", 5, U64, OPT, None)],
    "ProcessDescriptor": [("pid", 1, I32, OPT, None), ("process_name", 6, STR, OPT, None)],
    "ThreadDescriptor": [("pid", 1, I32, OPT, None), ("tid", 2, I32, OPT, None),
                         ("thread_name", 5, STR, OPT, None)],
}


def build_trace_class():
    fdp = descriptor_pb2.FileDescriptorProto(name="fvbpf_perfetto_subset.proto",
                                             package="pf", syntax="proto2")
    for name, fields in SCHEMA.items():
        m = fdp.message_type.add(name=name)
        for fname, num, typ, label, tname in fields:
            fd = m.field.add(name=fname, number=num, type=typ, label=label)
            if tname:
                fd.type_name = ".pf." + tname
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("pf.Trace"))


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def read(path):
    Trace = build_trace_class()
    data = open(path, "rb").read()
    trace = Trace()
    n = trace.ParseFromString(data)
    if n != len(data):
        fail("parsed %d of %d bytes" % (n, len(data)))
    return trace, len(data)


def varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7f) | (0x80 if n > 0x7f else 0))
        n >>= 7
        if not n:
            return bytes(out)


def annotation_value(a, st=None):
    """A debug annotation's value: a scalar, or a dict of its entries; an
    interned string through the sequence's state @st."""
    if len(a.dict_entries):
        return {e.name: annotation_value(e) for e in a.dict_entries}
    if a.HasField("string_value_iid"):
        if st is None or a.string_value_iid not in st["da_strings"]:
            fail("annotation string iid %d not interned" % a.string_value_iid)
        return st["da_strings"][a.string_value_iid]
    for fld in ("string_value", "int_value", "uint_value", "bool_value", "double_value"):
        if a.HasField(fld):
            return getattr(a, fld)
    return None


def annotation_name(a, st):
    if a.HasField("name_iid"):
        if a.name_iid not in st["da_names"]:
            fail("annotation name iid %d not interned" % a.name_iid)
        return st["da_names"][a.name_iid]
    return a.name


def decode(trace):
    tracks = {}       # uuid -> descriptor
    seqs = {}         # seq id -> state
    slices = []       # (uuid, name, cat, start, end)
    open_ = {}        # uuid -> stack
    flows_out = flows_in = 0
    meta = {}
    meta_bytes = 0    # the segment slice's annotations, as encoded
    for i, p in enumerate(trace.packet):
        seq = p.trusted_packet_sequence_id
        if not seq:
            fail("packet %d has no trusted_packet_sequence_id" % i)
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = p.track_descriptor
            continue
        st = seqs.get(seq)
        if p.sequence_flags & 1:
            st = seqs[seq] = {"names": {}, "cats": {}, "da_names": {}, "da_strings": {},
                              "ts": None, "track": None, "clock": None}
        if st is None:
            fail("packet %d on sequence %d before its incremental state was cleared" % (i, seq))
        if p.HasField("trace_packet_defaults"):
            d = p.trace_packet_defaults
            st["clock"] = d.timestamp_clock_id
            st["track"] = d.track_event_defaults.track_uuid
        if p.HasField("clock_snapshot"):
            mono = [c for c in p.clock_snapshot.clocks if c.clock_id == 3]
            inc = [c for c in p.clock_snapshot.clocks if c.clock_id == st["clock"] and c.is_incremental]
            if len(mono) != 1 or len(inc) != 1 or mono[0].timestamp != inc[0].timestamp:
                fail("sequence %d: clock snapshot does not tie its incremental clock to MONOTONIC" % seq)
            st["ts"] = inc[0].timestamp
        if p.HasField("interned_data"):
            for e in p.interned_data.event_names:
                st["names"][e.iid] = e.name
            for e in p.interned_data.event_categories:
                st["cats"][e.iid] = e.name
            for e in p.interned_data.debug_annotation_names:
                st["da_names"][e.iid] = e.name
            for e in p.interned_data.debug_annotation_string_values:
                st["da_strings"][e.iid] = e.str.decode("utf-8")
        if not p.HasField("track_event"):
            continue
        te = p.track_event
        if st["ts"] is None:
            fail("packet %d: a track event before the clock snapshot" % i)
        ts = st["ts"] + p.timestamp   # uint64: never goes back
        st["ts"] = ts
        uuid = te.track_uuid if te.HasField("track_uuid") else st["track"]
        if uuid not in tracks:
            fail("packet %d: track %d has no descriptor" % (i, uuid))
        stack = open_.setdefault(uuid, [])
        if te.type == 1:
            if te.name_iid not in st["names"]:
                fail("packet %d: name iid %d not interned on sequence %d" % (i, te.name_iid, seq))
            for c in te.category_iids:
                if c not in st["cats"]:
                    fail("packet %d: category iid %d not interned" % (i, c))
            name = st["names"][te.name_iid]
            cat = ",".join(st["cats"][c] for c in te.category_iids)
            flows_out += len(te.flow_ids)
            flows_in += len(te.terminating_flow_ids)
            if cat == "fvbpf":
                for a in te.debug_annotations:
                    meta[a.name] = annotation_value(a)
                    n = a.ByteSize()
                    meta_bytes += 1 + len(varint(n)) + n  # tag 4, length, message
            args = {} if cat == "fvbpf" else {annotation_name(a, st): annotation_value(a, st)
                                              for a in te.debug_annotations}
            stack.append((name, cat, ts, args))
        elif te.type == 2:
            if not stack:
                fail("packet %d: slice end without a begin on track %d" % (i, uuid))
            name, cat, start, args = stack.pop()
            slices.append((uuid, name, cat, start, ts, args))
        else:
            fail("packet %d: unexpected track event type %d" % (i, te.type))
    for uuid, stack in open_.items():
        if stack:
            fail("track %d: %d slices never end" % (uuid, len(stack)))
    return tracks, slices, flows_out, flows_in, meta, meta_bytes


def track_key(tracks, uuid):
    """(pid, tid) the way the JSON names tracks."""
    t = tracks[uuid]
    if t.HasField("thread"):
        return (t.thread.pid, t.thread.tid)
    parent = tracks.get(t.parent_uuid)
    if parent is not None and parent.name.startswith("GPU "):
        dev = int(parent.name[4:])
        if t.name.startswith("sync (stream "):
            return (dev, 0x40000000 | int(t.name[len("sync (stream "):-1]))
        return (dev, int(t.name[len("stream "):]))
    if t.name.startswith("Python of thread ") and t.parent_uuid in tracks:
        tid = int(t.name.split()[3])  # "Python of thread N (derived)", as the JSON's tid
        return (tracks[t.parent_uuid].process.pid, tid | 1 << 30)
    return ("meta", t.name)


def compare_meta(other, meta):
    """The segment slice's annotations are the JSON's otherData: the same
    keys, the same values (microseconds to the nanosecond)."""
    if sorted(other) != sorted(meta):
        fail("metadata keys differ: json only %s, pftrace only %s" %
             (sorted(set(other) - set(meta)), sorted(set(meta) - set(other))))
    for k, want in other.items():
        got = meta[k]
        if isinstance(want, float) and not isinstance(got, (bool, str, dict)):
            same = abs(want - got) < 0.0005
        else:
            same = want == got and type(want) is type(got)
        if not same:
            fail("metadata %s: json %r pftrace %r" % (k, want, got))
    print("metadata_equal keys=%d" % len(meta))


# --with-stack: the args each slice carries in both formats
PY_ARGS = ("Python stack", "Python line", "derived")


def kineto_only(e):
    """Events the JSON trace adds for Kineto's tools (HTA, TensorBoard): the
    ProfilerStep#N span (the pftrace's segment slice, category "fvbpf",
    plays its part) and the regions' spans on GPU streams."""
    return ((e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))
            or e.get("cat") == "gpu_user_annotation")


def compare_json(path, tracks, slices, flows_out, flows_in, meta):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", encoding="utf-8") as fh:
        t = json.load(fh)
    compare_meta(t["otherData"], meta)
    ev = t["traceEvents"]
    want = sorted(((e["pid"], e["tid"]), e["name"], e["cat"],
                   round(e["ts"] * 1000), round(e["ts"] * 1000) + round(e["dur"] * 1000))
                  + tuple(e["args"].get(k) for k in PY_ARGS)
                  for e in ev if e.get("ph") == "X" and not kineto_only(e))
    got = sorted((track_key(tracks, u), n, c, s, e) + tuple(a.get(k) for k in PY_ARGS)
                 for u, n, c, s, e, a in slices if c != "fvbpf")
    if len(want) != len(got):
        fail("json has %d slices, pftrace %d" % (len(want), len(got)))
    for w, g in zip(want, got):
        # ts and dur are rounded to ns separately in the JSON: allow 1 ns
        if w[:3] != g[:3] or abs(w[3] - g[3]) > 0 or abs(w[4] - g[4]) > 1 or w[5:] != g[5:]:
            fail("slice differs: json %r pftrace %r" % (w, g))
    jout = sum(1 for e in ev if e.get("ph") == "s")
    jin = sum(1 for e in ev if e.get("ph") == "f")
    if (jout, jin) != (flows_out, flows_in):
        fail("flows: json %d/%d pftrace %d/%d" % (jout, jin, flows_out, flows_in))
    print("json_equal slices=%d python_lines=%d" % (len(got), sum(1 for g in got if g[6])))


def compare_counts(path, slices):
    """Another run of the same workload: the same slices by name and category."""
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", encoding="utf-8") as fh:
        ev = json.load(fh)["traceEvents"]
    want = collections.Counter((e["cat"], e["name"]) for e in ev
                               if e.get("ph") == "X" and not kineto_only(e))
    got = collections.Counter((c, n) for _, n, c, _, _, _ in slices if c != "fvbpf")
    if want != got:
        fail("slice counts differ: json %s pftrace %s" % (sorted(want.items()), sorted(got.items())))
    print("json_counts_equal slices=%d" % sum(got.values()))


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        sys.exit(2)
    trace, size = read(args[0])
    tracks, slices, fo, fi, meta, meta_bytes = decode(trace)
    nslices = sum(1 for s in slices if s[2] != "fvbpf")
    print("packets=%d slices=%d flows_out=%d flows_in=%d tracks=%d bytes=%d" %
          (len(trace.packet), nslices, fo, fi, len(tracks), size))
    print("metadata_bytes=%d" % meta_bytes)
    for k in sorted(meta):
        print("metadata %s=%s" % (k, meta[k]))
    for s in sorted(slices, key=lambda s: (s[3], s[0])):
        if s[2] != "fvbpf":
            print("slice %s %s" % (s[2], s[1]))
            if "Python line" in s[5]:
                print("python_line %s %s %s" % (s[2], s[1], s[5]["Python line"]))
    if len(args) == 3 and args[1] == "--json":
        compare_json(args[2], tracks, slices, fo, fi, meta)
    elif len(args) == 3 and args[1] == "--counts":
        compare_counts(args[2], slices)


if __name__ == "__main__":
    main()
