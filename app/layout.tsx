import type { Metadata } from "next";
import type { ReactNode } from "react";
import "./globals.css";
import { THEME_BOOT_SCRIPT } from "../components/shell-prefs";

export const metadata: Metadata = {
  title: "Emberscope",
  description: "A local workbench for performance evidence",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" suppressHydrationWarning>
      <head>
        {/* The remembered theme and sidebar, applied before the first paint. */}
        <script dangerouslySetInnerHTML={{ __html: THEME_BOOT_SCRIPT }} />
      </head>
      <body>{children}</body>
    </html>
  );
}
