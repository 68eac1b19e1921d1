#!/usr/bin/env python3
"""The include check can fail: on a copy of the room table with a small tree
in which the case room includes the verdict, the numerics include an op's
header (and a file lies in no room), it must exit 1 and name all three; on the
same tree without them, exit 0.

usage: planted_include_test.py REPO_ROOT"""
import os
import shutil
import subprocess
import sys
import tempfile

repo = sys.argv[1]
check = os.path.join(repo, "tests", "rooms", "check_includes.py")


def write(root, path, text):
    os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
    with open(os.path.join(root, path), "w") as f:
        f.write(text)


def run(root):
    done = subprocess.run([sys.executable, check, root], capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


with tempfile.TemporaryDirectory() as root:
    os.makedirs(os.path.join(root, "cmake"))
    shutil.copy(os.path.join(repo, "cmake", "rooms.txt"), os.path.join(root, "cmake", "rooms.txt"))
    write(root, "fuzz/verdict/verdict.h", "#pragma once\n")
    write(root, "fuzz/case/case.h", '#pragma once\n#include "numerics/profile.h"\n')
    write(root, "numerics/profile.h", "#pragma once\n")
    write(root, "fuzz/case/case.cc", '#include "fuzz/case/case.h"\n')
    write(root, "ops/fused_q/args/fused_q_args.h", '#pragma once\n#include "numerics/types.h"\n')
    write(root, "numerics/types.h", "#pragma once\n")
    write(root, "numerics/rope.h", '#pragma once\n#include "numerics/types.h"\n')

    status, output = run(root)
    if status != 0:
        sys.exit(f"FAIL: the clean tree was refused ({status}):\n{output}")

    write(root, "fuzz/case/case.cc", '#include "fuzz/case/case.h"\n#include "fuzz/verdict/verdict.h"\n')
    write(root, "numerics/rope.h", '#pragma once\n#include "ops/fused_q/args/fused_q_args.h"\n')
    write(root, "loose/stray.cc", "int stray;\n")
    status, output = run(root)
    print(output, end="")
    wanted = ["fuzz/case/case.cc:2: room case includes fuzz/verdict/verdict.h of room verdict",
              "numerics/rope.h:2: room numerics includes ops/fused_q/args/fused_q_args.h of room fused_q_args",
              "loose/stray.cc: in no room"]
    missing = [w for w in wanted if w not in output]
    if status != 1 or missing:
        sys.exit(f"FAIL: exit {status}, missing {missing}")
print("PASS: the planted includes and the file in no room were refused")
