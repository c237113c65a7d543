/** Height of one flame-graph row in CSS pixels (tests compute positions from it). */
export const ROW_HEIGHT = 18;
