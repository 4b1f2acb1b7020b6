// A tiny observable value with a Preact hook: enough state management for this client.
import { useEffect, useState } from "preact/hooks";

export interface Signal<T> {
  value: T;
  subscribe(listener: (value: T) => void): () => void;
}

export function signal<T>(initial: T): Signal<T> {
  let current = initial;
  const listeners = new Set<(value: T) => void>();
  return {
    get value() {
      return current;
    },
    set value(next: T) {
      if (Object.is(next, current)) return;
      current = next;
      listeners.forEach((listener) => listener(next));
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The signal's current value; the component re-renders when it changes. */
export function useSignal<T>(source: Signal<T>): T {
  const [value, setValue] = useState(source.value);
  useEffect(() => {
    setValue(source.value);
    return source.subscribe(setValue);
  }, [source]);
  return value;
}
