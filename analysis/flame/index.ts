export * from "./tree";
export * from "./layout";
export * from "./colour";
export * from "./format";
export * from "./search";
export * from "./sandwich";
export * from "./diff";
