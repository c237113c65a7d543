"use client";

import { useCallback, useEffect, useRef, useState } from "react";

/**
 * An element's width in CSS pixels (at least `minimum`; `initial` until it is measured), followed
 * as it resizes. Give the returned ref to the element: it may mount later than the component.
 */
export function useElementWidth<T extends HTMLElement>(minimum: number, initial = 900): [number, (element: T | null) => void] {
  const [width, setWidth] = useState(initial);
  const observer = useRef<ResizeObserver | null>(null);
  const ref = useCallback(
    (element: T | null) => {
      observer.current?.disconnect();
      observer.current = null;
      if (!element) return;
      const measure = () => setWidth(Math.max(minimum, element.clientWidth));
      observer.current = new ResizeObserver(measure);
      observer.current.observe(element);
      measure();
    },
    [minimum],
  );
  useEffect(() => () => observer.current?.disconnect(), []);
  return [width, ref];
}
