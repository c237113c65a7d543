import type { FlameInputNode } from "./tree";

/** Builds flame nodes from "a;b;c value" lines (like folded stacks), for tests. */
export function nodesFromFolded(text: string): FlameInputNode[] {
  const byPath = new Map<string, FlameInputNode>();
  for (const line of text.trim().split("\n")) {
    const [stack, value] = line.trim().split(" ");
    const frames = stack.split(";");
    let parent: string | null = null;
    frames.forEach((name, i) => {
      const id: string = frames.slice(0, i + 1).join(";");
      let node = byPath.get(id);
      if (!node) {
        node = { node_id: id, parent_id: parent, frame_key: `k_${name}`, name, file: `${name}.js`, line: i + 1, module: name.startsWith("lib") ? "lib" : "app", kind: "js", self: 0, total: 0 };
        byPath.set(id, node);
      }
      node.total += Number(value);
      if (i === frames.length - 1) node.self += Number(value);
      parent = id;
    });
  }
  return [...byPath.values()];
}
