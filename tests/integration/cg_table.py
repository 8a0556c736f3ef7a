#!/usr/bin/env python3
# cg_table.py - writes a callgraph stack table (plugins/callgraph/cg_format.h)
# by hand, for opreport tests that need stacks the daemon cannot be made to
# record on demand: version 2 (the tree) and version 1 (the old hash table).
#   cg_table.py v2 OUT APP ROOT_KEY LEAF_KEY UNKNOWN COUNT
#       one stack: APP frame ROOT_KEY, UNKNOWN frames mapped to no image,
#       APP frame LEAF_KEY (the leaf), COUNT samples, application APP
#   cg_table.py v1 OUT APP ROOT_KEY LEAF_KEY COUNT
#       one stack of two APP frames in a version 1 table
# SPDX-License-Identifier: MIT
import struct
import sys

MAGIC = b"OPCGSTK\0"
IMAGES_MAX = 64
STRINGS_SIZE = 4096


def images_and_names(app):
    name = app.encode()
    image = struct.pack("<IIIiQQ", 0, len(name), 0, -1, 0, 0)
    return image, name + b"\0"


def areas():
    images_off = 4096
    strings_off = images_off + IMAGES_MAX * 32
    rest_off = (strings_off + STRINGS_SIZE + 4095) & ~4095
    return images_off, strings_off, rest_off


def v2(out, app, root_key, leaf_key, unknown, count):
    images_off, strings_off, nodes_off = areas()
    # root (counter 0, application image 1), then root-first frames
    nodes = [struct.pack("<QQII", 0, 0, 0, 1)]
    frames = [(1, root_key)] + [(0, 0x1000 + i) for i in range(unknown)] + [(1, leaf_key)]
    for i, (img, key) in enumerate(frames):
        leaf = i == len(frames) - 1
        nodes.append(struct.pack("<QQII", key, count if leaf else 0, len(nodes), img))
    image, name = images_and_names(app)
    hdr = MAGIC + struct.pack("<II6IQQIIIIQ", 2, 80, IMAGES_MAX, 1, STRINGS_SIZE, len(name),
                              len(nodes), len(nodes), 0, count, images_off, strings_off,
                              nodes_off, 1, 1 << 20)
    buf = bytearray(nodes_off + 24 * len(nodes))
    buf[0:len(hdr)] = hdr
    buf[images_off:images_off + 32] = image
    buf[strings_off:strings_off + len(name)] = name
    buf[nodes_off:] = b"".join(nodes)
    open(out, "wb").write(buf)


def v1(out, app, root_key, leaf_key, count):
    images_off, strings_off, stacks_off = areas()
    stacks_max, frames_max = 16, 256
    frames_off = stacks_off + 32 * stacks_max
    image, name = images_and_names(app)
    hdr = MAGIC + struct.pack("<II8IQQII", 1, 72, IMAGES_MAX, 1, STRINGS_SIZE, len(name),
                              stacks_max, 1, frames_max, 2, 0, count, images_off, strings_off)
    buf = bytearray(frames_off + 16 * frames_max)
    buf[0:len(hdr)] = hdr
    buf[images_off:images_off + 32] = image
    buf[strings_off:strings_off + len(name)] = name
    # slot 3: id, count, frame_off, depth, flags, counter, app; frames leaf first
    buf[stacks_off + 3 * 32:stacks_off + 4 * 32] = struct.pack("<QQIHHII", 0x1234, count, 0, 2,
                                                               0, 0, 1)
    buf[frames_off:frames_off + 32] = struct.pack("<IIQIIQ", 1, 0, leaf_key, 1, 0, root_key)
    open(out, "wb").write(buf)


if __name__ == "__main__":
    a = sys.argv
    if len(a) == 8 and a[1] == "v2":
        v2(a[2], a[3], int(a[4], 0), int(a[5], 0), int(a[6]), int(a[7]))
    elif len(a) == 7 and a[1] == "v1":
        v1(a[2], a[3], int(a[4], 0), int(a[5], 0), int(a[6]))
    else:
        sys.exit("usage: cg_table.py v2 OUT APP ROOT_KEY LEAF_KEY UNKNOWN COUNT | "
                 "v1 OUT APP ROOT_KEY LEAF_KEY COUNT")
