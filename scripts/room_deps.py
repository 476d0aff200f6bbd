#!/usr/bin/env python3
"""The room graph of fencegate's sources, and the check that CMake links every arrow of it.

A room is a source folder (base/net, lockstore/fence, resource_adapters/s3, gateway/session, ...;
the files at lockstore/ and resource_adapters/ form rooms of their own). An arrow A -> B means a
file of A has `#include "B/..."`. Every room has a CMakeLists.txt that puts its files into a
target and links the targets of the rooms it includes. Include directories are global, so the
compiler accepts an include across rooms whether or not the target links it: this script is what
holds the arrows (ctest room_deps, label unit).

  scripts/room_deps.py            prints the room graph, the target graph and any cycle
  scripts/room_deps.py --check    also fails (exit 1) on any of:
    - an include of a room whose target the including room's CMakeLists.txt does not link
      (PUBLIC when a header includes it, since then whoever includes that header needs it too);
    - a link in a room's CMakeLists.txt that none of the room's includes needs, or one that is
      PUBLIC though only .cc files include it;
    - an arrow between two rooms of one target that INSIDE_TARGET below does not list;
    - an arrow against the layering: base/ includes nothing of ours outside base/; lockstore/ and
      resource_adapters/ include neither each other nor gateway/; adapters never include each
      other; nothing outside gateway/ includes gateway/;
    - a cycle between targets, or a .cc file under the source folders in no target.
"""

import argparse
import collections
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SOURCE_TREES = ("base", "lockstore", "resource_adapters", "gateway")

# Rooms that include each other share one target; these are the arrows allowed between them
# (anything else between rooms of one target fails the check). Cut a cycle and the rooms can get
# targets of their own.
INSIDE_TARGET = {
    # config.h holds the option types of auth/, tls/ and http/ (auth_config.h, tls_settings.h,
    # underscore_fields.h), while http/router.h and auth/authorizer.h take RouteConfig / Config.
    "fencegate_gateway_config": {
        ("gateway/auth", "gateway/config"),
        ("gateway/auth", "gateway/tls"),
        ("gateway/config", "gateway/auth"),
        ("gateway/config", "gateway/http"),
        ("gateway/config", "gateway/tls"),
        ("gateway/http", "gateway/config"),
        ("gateway/tls", "gateway/http"),
    },
    # The server builds sessions, the admin server and the store command; they use its
    # GatewayContext, listen sockets and network threads (a session posts to its thread's inbox).
    "fencegate_gateway_server": {
        ("gateway/admin", "gateway/server"),
        ("gateway/cli", "gateway/server"),
        ("gateway/server", "gateway/admin"),
        ("gateway/server", "gateway/cli"),
        ("gateway/server", "gateway/session"),
        ("gateway/session", "gateway/server"),
    },
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
VISIBILITY = {"PUBLIC", "PRIVATE", "INTERFACE"}
LIBRARY_KINDS = {"STATIC", "SHARED", "OBJECT", "INTERFACE", "MODULE"}


def room_of(path):
    return os.path.dirname(path)


def read_includes():
    """{room: {included room: set of (file, is_header)}} for includes across rooms."""
    arrows = collections.defaultdict(lambda: collections.defaultdict(set))
    files = []
    for tree in SOURCE_TREES:
        for folder, _, names in os.walk(os.path.join(ROOT, tree)):
            for name in sorted(names):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.relpath(os.path.join(folder, name), ROOT)
                files.append(path)
                with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                    text = f.read()
                for included in INCLUDE.findall(text):
                    if not included.startswith(tuple(t + "/" for t in SOURCE_TREES)):
                        continue
                    if room_of(included) != room_of(path):
                        arrows[room_of(path)][room_of(included)].add((path, path.endswith(".h")))
    return arrows, files


def cmake_commands(text):
    """(command name, [arguments]) of a CMakeLists.txt, comments dropped, nesting flattened."""
    text = re.sub(r"#[^\n]*", "", text)
    for match in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(((?:[^()]|\([^()]*\))*)\)", text):
        yield match.group(1).lower(), match.group(2).split()


class Cmake:
    def __init__(self):
        self.target_of_source = {}  # source path -> target
        self.kind = {}  # target -> STATIC/INTERFACE/EXECUTABLE
        # (CMakeLists.txt path, target) -> {linked target: "PUBLIC"/"PRIVATE"/"INTERFACE"}
        self.links = collections.defaultdict(dict)
        self.all_links = collections.defaultdict(dict)  # target -> {linked: visibility}
        self.files = []

    def read(self):
        for tree in SOURCE_TREES:
            for folder, _, names in os.walk(os.path.join(ROOT, tree)):
                if "CMakeLists.txt" in names:
                    self.read_file(os.path.relpath(os.path.join(folder, "CMakeLists.txt"), ROOT))

    def read_file(self, path):
        self.files.append(path)
        folder = os.path.dirname(path)
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()

        def source(arg):
            arg = arg.replace("${PROJECT_SOURCE_DIR}/", "").replace("${CMAKE_CURRENT_SOURCE_DIR}/", "")
            if arg.startswith(tuple(tree + "/" for tree in SOURCE_TREES)):
                return arg
            return os.path.normpath(os.path.join(folder, arg))

        for command, args in cmake_commands(text):
            if not args:
                continue
            target, rest = args[0], args[1:]
            if command in ("add_library", "add_executable"):
                kind = "EXECUTABLE" if command == "add_executable" else "STATIC"
                if rest and rest[0] in LIBRARY_KINDS:
                    kind, rest = rest[0], rest[1:]
                self.kind[target] = kind
                for arg in rest:
                    self.target_of_source[source(arg)] = target
            elif command == "target_sources":
                for arg in rest:
                    if arg not in VISIBILITY:
                        self.target_of_source[source(arg)] = target
            elif command == "target_link_libraries":
                visibility = "PUBLIC"
                for arg in rest:
                    if arg in VISIBILITY:
                        visibility = arg
                        continue
                    if not arg.startswith("fencegate"):
                        continue
                    for table in (self.links[(path, target)], self.all_links[target]):
                        if table.get(arg) != "PUBLIC":
                            table[arg] = "PUBLIC" if visibility == "INTERFACE" else visibility

    def is_aggregate(self, target):
        """An INTERFACE target without sources of its own: it stands for the targets it links."""
        return self.kind.get(target) == "INTERFACE" and target not in self.target_of_source.values()

    def expand(self, target):
        """`target`, or the targets an aggregate stands for."""
        if not self.is_aggregate(target):
            return {target}
        out = set()
        for linked in self.all_links[target]:
            out |= self.expand(linked)
        return out


def strongly_connected(graph):
    """Tarjan: the components of `graph` ({node: iterable of nodes}) with more than one node."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    nodes = set(graph) | {n for targets in graph.values() for n in targets}
    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return out


def layering_error(source, target):
    top_source, top_target = source.split("/")[0], target.split("/")[0]
    if top_source == "base" and top_target != "base":
        return "base/ includes nothing of ours outside base/"
    if top_target == "gateway" and top_source != "gateway":
        return "nothing outside gateway/ includes gateway/"
    if {top_source, top_target} == {"lockstore", "resource_adapters"}:
        return "lockstore/ and resource_adapters/ never include each other"
    adapters_room = "resource_adapters/"
    # registry/ is the table of kinds: it alone names every adapter.
    if (source.startswith(adapters_room) and target.startswith(adapters_room)
            and source != adapters_room + "registry"
            and "transport" not in (source[len(adapters_room):], target[len(adapters_room):])):
        return "adapters never include each other (only the interface, registry/ and transport/)"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 on any violation")
    options = parser.parse_args()

    arrows, files = read_includes()
    cmake = Cmake()
    cmake.read()
    errors = []

    # Each room's target: the one its files are in.
    rooms = sorted({room_of(f) for f in files})
    room_target = {}
    for room in rooms:
        owners = {cmake.target_of_source[f] for f in files
                  if room_of(f) == room and f in cmake.target_of_source}
        missing = [f for f in files if room_of(f) == room and f.endswith(".cc")
                   and f not in cmake.target_of_source]
        for f in missing:
            errors.append(f"{f}: in no CMake target")
        if len(owners) > 1:
            errors.append(f"{room}: files in several targets ({', '.join(sorted(owners))})")
        if owners:
            room_target[room] = sorted(owners)[0]
        else:
            errors.append(f"{room}: no CMake target lists its files")

    # Print the room graph.
    print("Room graph (room [target] -> rooms it includes; * = from a header):")
    for room in rooms:
        outgoing = arrows.get(room, {})
        parts = []
        for other in sorted(outgoing):
            header = any(is_header for _, is_header in outgoing[other])
            parts.append(other + ("*" if header else ""))
        print(f"  {room} [{room_target.get(room, '?')}] -> {' '.join(parts) or '(nothing of ours)'}")

    room_cycles = strongly_connected({r: list(arrows.get(r, {})) for r in rooms})
    print("Room cycles (kept in one target):" if room_cycles else "Room cycles: none")
    for component in room_cycles:
        print("  " + " <-> ".join(component))

    print("Target graph (target -> targets it links; PUBLIC* / PRIVATE):")
    for target in sorted(cmake.all_links):
        if cmake.kind.get(target) == "EXECUTABLE" or target.startswith("fencegate"):
            links = cmake.all_links[target]
            shown = [t + ("*" if v == "PUBLIC" else "") for t, v in sorted(links.items())]
            print(f"  {target}{' (aggregate)' if cmake.is_aggregate(target) else ''} -> "
                  + " ".join(shown))

    # Each arrow against the links of the including room's CMakeLists.txt.
    for room in rooms:
        target = room_target.get(room)
        if target is None:
            continue
        cmake_file = os.path.join(room, "CMakeLists.txt")
        declared = cmake.links.get((cmake_file, target), {})
        if not os.path.exists(os.path.join(ROOT, cmake_file)):
            errors.append(f"{room}: has no CMakeLists.txt of its own")
        needed = {}  # linked target -> "PUBLIC" / "PRIVATE"
        for other, sites in sorted(arrows.get(room, {}).items()):
            reason = layering_error(room, other)
            if reason:
                site = sorted(sites)[0][0]
                errors.append(f"{site}: includes {other}/: {reason}")
            other_target = room_target.get(other)
            if other_target is None:
                continue
            if other_target == target:
                if (room, other) not in INSIDE_TARGET.get(target, set()):
                    site = sorted(sites)[0][0]
                    errors.append(f"{site}: includes {other}/, a room of the same target {target} "
                                  "that INSIDE_TARGET in scripts/room_deps.py does not allow")
                continue
            header = any(is_header for _, is_header in sites)
            if header or needed.get(other_target) != "PUBLIC":
                needed[other_target] = "PUBLIC" if header else "PRIVATE"
        covered = {}
        for linked, visibility in declared.items():
            for member in cmake.expand(linked):
                covered[member] = visibility
        for other_target, visibility in sorted(needed.items()):
            have = covered.get(other_target)
            sites = sorted({s for o, ss in arrows[room].items() if room_target.get(o) == other_target
                            for s, h in ss if h or visibility == "PRIVATE"})
            if have is None:
                errors.append(f"{cmake_file}: {target} does not link {other_target}, which "
                              f"{sites[0]} includes (add it {visibility})")
            elif visibility == "PUBLIC" and have != "PUBLIC":
                errors.append(f"{cmake_file}: {target} links {other_target} PRIVATE, but the header "
                              f"{sites[0]} includes it (make it PUBLIC)")
        for linked, visibility in sorted(declared.items()):
            if cmake.is_aggregate(linked):
                if cmake.kind.get(target) != "EXECUTABLE":
                    errors.append(f"{cmake_file}: {target} links the aggregate {linked}; "
                                  "link the room targets it includes")
                continue
            if linked not in needed:
                errors.append(f"{cmake_file}: {target} links {linked}, but no file of {room}/ "
                              "includes it")
            elif visibility == "PUBLIC" and needed[linked] == "PRIVATE":
                errors.append(f"{cmake_file}: {target} links {linked} PUBLIC, but only .cc files "
                              f"of {room}/ include it (make it PRIVATE)")

    # Static libraries that link each other in a circle.
    target_graph = {t: [l for l in links if not cmake.is_aggregate(l)]
                    for t, links in cmake.all_links.items() if not cmake.is_aggregate(t)}
    for component in strongly_connected(target_graph):
        errors.append("targets link each other in a cycle: " + " <-> ".join(component))

    if errors:
        print(f"{len(errors)} problem(s):")
        for error in errors:
            print("  " + error)
    else:
        print("Every include is linked, every link is used, no cycle between targets.")
    return 1 if (options.check and errors) else 0


if __name__ == "__main__":
    sys.exit(main())
