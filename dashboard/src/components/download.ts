// Saves text the page fetched as a file: a Blob behind an object URL, clicked through a temporary
// <a download> (the CSP allows no navigation to a data: URL, and the session cookie rides on fetch only).
export function downloadText(text: string, filename: string, type = 'text/csv'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
