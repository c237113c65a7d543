"use client";

import { useState } from "react";
import type { CompileReport, Workflow } from "../../../analysis/workflow/compile";
import { WorkflowDagView } from "../../../components/dag/WorkflowDagView";
import type { WhatIfValue } from "../../../components/url-state";

/** The stored workflow's DAG, critical path and what-if: the run page's Critical path view, over the stored document. */
export function WorkflowPageDag(props: { workflow: Workflow; compile: CompileReport }) {
  const [selected, setSelected] = useState<string | null>(null);
  const [whatIf, setWhatIf] = useState<WhatIfValue | null>(null);
  return <WorkflowDagView workflow={props.workflow} compile={props.compile} selected={selected} onSelect={setSelected} whatIf={whatIf} onWhatIf={setWhatIf} />;
}
