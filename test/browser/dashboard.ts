// Steps shared by the dashboard's browser suites, done the way a customer does them.
import type { Page } from 'playwright-core';

let accountCounter = 0;

export const PASSWORD = 'correct horse battery';

export function uniqueEmail(label: string): string {
  return `${label}-${++accountCounter}-${process.pid}@example.test`;
}

export async function signUp(page: Page, email: string, password = PASSWORD, name?: string): Promise<void> {
  await page.goto('/signup');
  if (name !== undefined) await page.getByLabel('Name (optional)').fill(name);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}

export async function signIn(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.goto('/signin');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}

/** The page's text content, for "is it shown / is it gone" checks. */
export function bodyText(page: Page): Promise<string> {
  return page.locator('body').innerText();
}
