"use client";

import { useState } from "react";
import "./share.css";
import { flameSvg, type SvgFlameNode } from "../../analysis/export/flame-svg";
import { downloadBlob, fileNameOf, svgToPng } from "./download";

/**
 * "SVG" and "PNG" downloads of the flame graph as shown: the same nodes, zoom and orientation,
 * the stable colours, a title naming the run, metric and commit.
 */
export function FlameExport(props: {
  nodes: readonly SvgFlameNode[];
  title: string;
  commitId: string;
  unit: string | null;
  metric: string | null;
  zoom: string | null;
  orientation: "icicle" | "flame";
}) {
  const [state, setState] = useState<{ busy: boolean; error: string | null }>({ busy: false, error: null });
  const render = () =>
    flameSvg(props.nodes, {
      title: props.title,
      subtitle: `${props.metric ?? "value"} · commit ${props.commitId}`,
      unit: props.unit,
      metric: props.metric,
      zoom: props.zoom,
      orientation: props.orientation,
      width: 1600,
    });
  const saveSvg = () => downloadBlob(new Blob([render().svg], { type: "image/svg+xml" }), fileNameOf(props.title, ".flame.svg"));
  const savePng = async () => {
    setState({ busy: true, error: null });
    try {
      const { svg } = render();
      const height = Number(/height="(\d+)"/.exec(svg)?.[1] ?? 600);
      downloadBlob(await svgToPng(svg, 1600, height), fileNameOf(props.title, ".flame.png"));
      setState({ busy: false, error: null });
    } catch (error) {
      setState({ busy: false, error: error instanceof Error ? error.message : String(error) });
    }
  };
  return (
    <span className="flame-export" data-testid="flame-export">
      <button type="button" className="plain-button" onClick={saveSvg} title="Download this flame graph (zoom and orientation as shown) as SVG" data-testid="export-svg">
        SVG
      </button>
      <button type="button" className="plain-button" onClick={() => void savePng()} disabled={state.busy} title="Download this flame graph as PNG (2× resolution)" data-testid="export-png">
        {state.busy ? "PNG…" : "PNG"}
      </button>
      {state.error ? <span className="error-inline"> {state.error}</span> : null}
    </span>
  );
}
