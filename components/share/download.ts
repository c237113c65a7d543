/** Saves bytes as a file the browser downloads (an object URL on a temporary link). */
export function downloadBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  link.style.display = "none";
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** An SVG document drawn into a PNG at `scale` × its size (for high-density screens). */
export async function svgToPng(svg: string, width: number, height: number, scale = 2): Promise<Blob> {
  const url = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
  try {
    const image = new Image();
    image.decoding = "async";
    await new Promise<void>((resolve, reject) => {
      image.onload = () => resolve();
      image.onerror = () => reject(new Error("The SVG could not be drawn as an image."));
      image.src = url;
    });
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
    const context = canvas.getContext("2d");
    if (!context) throw new Error("No 2D canvas in this browser.");
    context.scale(scale, scale);
    context.drawImage(image, 0, 0, width, height);
    return await new Promise<Blob>((resolve, reject) => canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("The PNG could not be encoded."))), "image/png"));
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** A file name of a title: letters, digits and a few marks. */
export function fileNameOf(title: string, extension: string): string {
  const base = title.replace(/\.[A-Za-z0-9]{1,12}(\.gz)?$/, "").replace(/[^\w.\-+@()]+/g, "_").replace(/^[._]+|_+$/g, "").slice(0, 120);
  return `${base || "flame"}${extension}`;
}
