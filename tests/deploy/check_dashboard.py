"""Checks deploy/grafana/fencegate.json is a dashboard Grafana imports as intended: the data source
is a variable (`datasource`, of Prometheus) that every panel and query uses, `instance` and `route`
variables exist, panel ids are unique, every panel that is not a row has queries, and panels lie on
the 24-column grid without overlapping. Which metrics the queries name is checked against a real
gateway by dashboard_metrics_test.py."""

import json
import sys

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def main(path):
    with open(path) as f:
        dashboard = json.load(f)
    errors = []
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    source = variables.get("datasource")
    if source is None or source["type"] != "datasource" or source["query"] != "prometheus":
        errors.append("no `datasource` variable of type datasource (prometheus)")
    for name in ("instance", "route"):
        variable = variables.get(name)
        if variable is None or variable["type"] != "query" or variable["datasource"] != DATASOURCE:
            errors.append(f"no `{name}` query variable on ${{datasource}}")
    ids = set()
    cells = set()
    for panel in dashboard["panels"]:
        title = panel.get("title", "?")
        if panel["id"] in ids:
            errors.append(f"panel id {panel['id']} twice")
        ids.add(panel["id"])
        grid = panel["gridPos"]
        if grid["x"] < 0 or grid["x"] + grid["w"] > 24:
            errors.append(f"{title}: outside the 24 columns")
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                if (x, y) in cells:
                    errors.append(f"{title}: overlaps another panel at {x},{y}")
                cells.add((x, y))
        if panel["type"] == "row":
            continue
        if panel.get("datasource") != DATASOURCE:
            errors.append(f"{title}: datasource is not ${{datasource}}")
        targets = panel.get("targets", [])
        if not targets:
            errors.append(f"{title}: no queries")
        for target in targets:
            if target.get("datasource") != DATASOURCE or not target.get("expr"):
                errors.append(f"{title}: query {target.get('refId')} lacks expr or ${{datasource}}")
            if "[$__rate_interval]" not in target["expr"] and "rate(" in target["expr"]:
                errors.append(f"{title}: rate() over a fixed window, not $__rate_interval")
    for error in errors:
        print(error)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
