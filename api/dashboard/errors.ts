/** An error a page answers with its status and a message for the person (HTML, not problem+json). */
export class PageError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}
