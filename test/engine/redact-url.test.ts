import {describe, expect, it} from 'vitest'

import {redactUrl} from '../../src/store/url.js'

describe('redactUrl: a connection URL fit for messages', () => {
  it('masks the password in user:pass@', () => {
    expect(redactUrl('postgres://app:s3cret@db.example:5432/pricing')).toBe('postgres://app:***@db.example:5432/pricing')
  })

  it('masks password and sslpassword query parameters, whatever their case, and keeps the others', () => {
    const shown = redactUrl('postgres://app@db.example/pricing?sslmode=require&password=s3cret&SSLPassword=k3y&application_name=pricectl')
    expect(shown).not.toContain('s3cret')
    expect(shown).not.toContain('k3y')
    expect(shown).toBe('postgres://app@db.example/pricing?sslmode=require&password=***&SSLPassword=***&application_name=pricectl')
  })

  it('masks both in a URL the URL parser refuses', () => {
    const shown = redactUrl('postgres://app:s3cret@[bad/pricing?password=t0p&x=1')
    expect(shown).not.toContain('s3cret')
    expect(shown).not.toContain('t0p')
    expect(shown).toContain('x=1')
  })

  it('leaves a URL without secrets as it is', () => {
    expect(redactUrl('postgres://app@db.example/pricing?sslmode=require')).toBe('postgres://app@db.example/pricing?sslmode=require')
  })
})
