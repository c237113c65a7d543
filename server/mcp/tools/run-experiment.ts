import type { z } from "zod";
import { runExperiment } from "../../services/experiments";
import type { ServiceDef } from "../../services/service";
import type { McpTool } from "../tools";
import { experimentLinks } from "./experiment-links";

type Started = z.output<typeof runExperiment.output>;

export const runExperimentTool: McpTool = {
  name: "run_experiment",
  title: "Run a planned experiment",
  description:
    "Start a planned experiment with its single-use plan_token (consumed before any trial starts; expected_plan_id guards against running another plan) and return at once with an operation_id: the worker pool runs every trial as a capture of its own, in the planned order, as one durable operation. The same idempotency_key with the same token reconnects to the same operation; with another plan it fails (IDEMPOTENCY_CONFLICT). Next: poll get_operation (progress is completed/total trials) until it ends, then get_experiment for the decision; cancel_operation stops it.",
  service: runExperiment as unknown as ServiceDef,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  summarize: (r: Started) => `Experiment ${r.experiment_id}: operation ${r.operation_id} ${r.status}${r.reconnected ? " (reconnected)" : ""}. Poll get_operation, then get_experiment.`,
  links: (r: Started) => experimentLinks(undefined, r.operation_id),
};
